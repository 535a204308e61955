#!/usr/bin/env python3
"""Expected AWS Signature Version 4 values for src/embed/sigv4.rs's unit tests, from
botocore's own signer (`botocore.auth.SigV4Auth`) at a fixed time.

Usage: python3 -m venv VENV && VENV/bin/pip install botocore
       VENV/bin/python scripts/sigv4_vectors.py          # prints the vectors
       VENV/bin/python scripts/sigv4_vectors.py --check  # exit 1 unless the Rust tests hold them

The first three are also the published SigV4 test suite's (get-vanilla, post-vanilla,
get-vanilla-query-order-key-case); the rest have no published value, so botocore is the
reference.
"""

import datetime
import pathlib
import sys
from unittest import mock

import botocore.auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

SUITE_KEY = ("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
SUITE_TOKEN = (
    "AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxf"
    "pSPfIeoIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KP"
    "kyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbq"
    "BAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA=="
)


def sign(method, url, body, headers, region, service, when, token=None):
    credentials = Credentials(*SUITE_KEY, token=token)
    request = AWSRequest(method=method, url=url, data=body, headers=headers)
    with mock.patch.object(botocore.auth, "get_current_datetime", return_value=when):
        botocore.auth.SigV4Auth(credentials, service, region).add_auth(request)
    return request.headers["Authorization"]


SUITE_TIME = datetime.datetime(2015, 8, 30, 12, 36, 0)
BEDROCK_TIME = datetime.datetime(2026, 1, 15, 8, 30, 0)

VECTORS = {
    "get-vanilla": sign("GET", "https://example.amazonaws.com/", b"", {},
                        "us-east-1", "service", SUITE_TIME),
    "post-vanilla": sign("POST", "https://example.amazonaws.com/", b"", {},
                         "us-east-1", "service", SUITE_TIME),
    "get-vanilla-query-order-key-case": sign(
        "GET", "https://example.amazonaws.com/?Param2=value2&Param1=value1", b"", {},
        "us-east-1", "service", SUITE_TIME),
    "post-x-www-form-urlencoded": sign(
        "POST", "https://example.amazonaws.com/", b"Param1=value1",
        {"Content-Type": "application/x-www-form-urlencoded"},
        "us-east-1", "service", SUITE_TIME),
    "post-sts-header-before": sign("POST", "https://example.amazonaws.com/", b"", {},
                                   "us-east-1", "service", SUITE_TIME, token=SUITE_TOKEN),
    "bedrock-titan-v2-invoke": sign(
        "POST",
        "https://bedrock-runtime.eu-central-1.amazonaws.com/model/amazon.titan-embed-text-v2%3A0/invoke",
        b'{"inputText":"hello","dimensions":256,"normalize":true}', {},
        "eu-central-1", "bedrock", BEDROCK_TIME, token="session-token-example"),
}


def main():
    for name, authorization in VECTORS.items():
        print(f"{name}: {authorization}")
    if "--check" in sys.argv:
        source = (pathlib.Path(__file__).parent.parent / "src/embed/sigv4.rs").read_text()
        missing = [name for name, authorization in VECTORS.items()
                   if authorization.rsplit("Signature=", 1)[1] not in source]
        if missing:
            print("signatures missing from src/embed/sigv4.rs:", ", ".join(missing))
            sys.exit(1)


if __name__ == "__main__":
    main()
