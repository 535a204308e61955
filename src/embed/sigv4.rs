//! AWS Signature Version 4 for the Bedrock backends: the canonical request, the string
//! to sign, the HMAC-SHA256 key derivation and the `Authorization` header, plus
//! [`BedrockSigner`], which signs each attempt the shared HTTP client sends.
//!
//! It signs `host`, `x-amz-date` and, with temporary credentials,
//! `x-amz-security-token`: what Bedrock's runtime requires. Paths are URI-encoded once
//! more when canonicalised, as every AWS service but S3 expects (a model id's `:` is
//! sent as `%3A` and signed as `%253A`). The unit tests check it against the published
//! SigV4 test suite and against botocore (`scripts/sigv4_vectors.py`). It never logs,
//! formats or stores the secret key or the session token.

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

use super::aws_credentials::AwsCredentials;
use crate::error::Error;
use crate::http::{HttpClient, HttpSettings, Method, RequestSigner};

/// The service name Bedrock's runtime signs with.
pub const BEDROCK_SIGNING_NAME: &str = "bedrock";

/// One request as it is signed: the path as sent (already percent-encoded), the raw
/// query, the headers to sign and the body.
pub struct Signable<'a> {
    pub method: &'a str,
    pub path: &'a str,
    pub query: &'a str,
    pub headers: &'a [(String, String)],
    pub payload: &'a [u8],
}

/// Where and when a request is signed.
pub struct Scope<'a> {
    pub region: &'a str,
    pub service: &'a str,
    /// `YYYYMMDDTHHMMSSZ`, the value of `x-amz-date`.
    pub amz_date: &'a str,
}

/// Percent-encodes every byte but the unreserved ones (`A-Z a-z 0-9 - _ . ~`), and `/`
/// too when `keep_slash`.
fn uri_encode(text: &str, keep_slash: bool) -> String {
    let mut encoded = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric()
            || matches!(byte, b'-' | b'_' | b'.' | b'~')
            || (keep_slash && byte == b'/')
        {
            encoded.push(byte as char);
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    encoded
}

/// `text` with `%XX` escapes (and nothing else) decoded.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut position = 0;
    while position < bytes.len() {
        let escape = (bytes[position] == b'%')
            .then(|| text.get(position + 1..position + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escape {
            Some(byte) => {
                decoded.push(byte);
                position += 3;
            }
            None => {
                decoded.push(bytes[position]);
                position += 1;
            }
        }
    }
    String::from_utf8_lossy(&decoded).into_owned()
}

/// The query's parameters, each name and value encoded, sorted by name then value.
fn canonical_query(query: &str) -> String {
    let mut parameters: Vec<(String, String)> = query
        .split('&')
        .filter(|parameter| !parameter.is_empty())
        .map(|parameter| {
            let (name, value) = parameter.split_once('=').unwrap_or((parameter, ""));
            (
                uri_encode(&percent_decode(name), false),
                uri_encode(&percent_decode(value), false),
            )
        })
        .collect();
    parameters.sort();
    parameters
        .iter()
        .map(|(name, value)| format!("{name}={value}"))
        .collect::<Vec<_>>()
        .join("&")
}

/// Lower-cased names and trimmed values (inner runs of spaces made one), sorted; the
/// canonical header block and the signed-header list.
fn canonical_headers(headers: &[(String, String)]) -> (String, String) {
    let mut normalized: Vec<(String, String)> = headers
        .iter()
        .map(|(name, value)| {
            (
                name.to_ascii_lowercase(),
                value.split_whitespace().collect::<Vec<_>>().join(" "),
            )
        })
        .collect();
    normalized.sort();
    let block = normalized
        .iter()
        .map(|(name, value)| format!("{name}:{value}\n"))
        .collect::<String>();
    let names = normalized
        .iter()
        .map(|(name, _)| name.as_str())
        .collect::<Vec<_>>()
        .join(";");
    (block, names)
}

fn hex_sha256(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn hmac_sha256(key: &[u8], message: &str) -> Vec<u8> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes keys of any length");
    mac.update(message.as_bytes());
    mac.finalize().into_bytes().to_vec()
}

/// The canonical request of SigV4's first task.
pub fn canonical_request(request: &Signable<'_>) -> String {
    let path = if request.path.is_empty() {
        "/"
    } else {
        request.path
    };
    let (headers, signed) = canonical_headers(request.headers);
    format!(
        "{}\n{}\n{}\n{headers}\n{signed}\n{}",
        request.method,
        uri_encode(path, true),
        canonical_query(request.query),
        hex_sha256(request.payload)
    )
}

/// The `Authorization` header's value for `request`, signed by `credentials` in `scope`.
pub fn authorization(
    request: &Signable<'_>,
    credentials: &AwsCredentials,
    scope: &Scope<'_>,
) -> String {
    let day = &scope.amz_date[..scope.amz_date.len().min(8)];
    let credential_scope = format!("{day}/{}/{}/aws4_request", scope.region, scope.service);
    let string_to_sign = format!(
        "AWS4-HMAC-SHA256\n{}\n{credential_scope}\n{}",
        scope.amz_date,
        hex_sha256(canonical_request(request).as_bytes())
    );
    let key = [day, scope.region, scope.service, "aws4_request"]
        .iter()
        .fold(
            format!("AWS4{}", credentials.secret_access_key()).into_bytes(),
            |key, part| hmac_sha256(&key, part),
        );
    let signature = hex(&hmac_sha256(&key, &string_to_sign));
    let (_, signed) = canonical_headers(request.headers);
    format!(
        "AWS4-HMAC-SHA256 Credential={}/{credential_scope}, SignedHeaders={signed}, Signature={signature}",
        credentials.access_key_id
    )
}

/// The host (with any non-default port), path and query of an `http(s)://` URL.
fn split_url(url: &str) -> (String, &str, &str) {
    let (scheme, rest) = url.split_once("://").unwrap_or(("https", url));
    let (authority, path_and_query) = match rest.find('/') {
        Some(slash) => (&rest[..slash], &rest[slash..]),
        None => (rest, "/"),
    };
    let default_port = if scheme == "http" { ":80" } else { ":443" };
    let host = authority
        .strip_suffix(default_port)
        .unwrap_or(authority)
        .to_ascii_lowercase();
    let (path, query) = path_and_query
        .split_once('?')
        .unwrap_or((path_and_query, ""));
    (host, path, query)
}

/// Signs every request of a Bedrock client with one set of credentials, for one region.
pub struct BedrockSigner {
    credentials: AwsCredentials,
    region: String,
}

impl BedrockSigner {
    pub fn new(credentials: AwsCredentials, region: &str) -> BedrockSigner {
        BedrockSigner {
            credentials,
            region: region.to_owned(),
        }
    }

    /// The headers that sign `method url payload` at `amz_date`.
    fn headers_at(
        &self,
        method: Method,
        url: &str,
        payload: &[u8],
        amz_date: &str,
    ) -> Vec<(String, String)> {
        let (host, path, query) = split_url(url);
        let mut signed = vec![
            ("host".to_owned(), host),
            ("x-amz-date".to_owned(), amz_date.to_owned()),
        ];
        if let Some(token) = self.credentials.session_token() {
            signed.push(("x-amz-security-token".to_owned(), token.to_owned()));
        }
        let authorization = authorization(
            &Signable {
                method: method.name(),
                path,
                query,
                headers: &signed,
                payload,
            },
            &self.credentials,
            &Scope {
                region: &self.region,
                service: BEDROCK_SIGNING_NAME,
                amz_date,
            },
        );
        // `host` is the one the HTTP client writes from the URL.
        signed.remove(0);
        signed.push(("authorization".to_owned(), authorization));
        signed
    }
}

impl RequestSigner for BedrockSigner {
    fn headers(&self, method: Method, url: &str, payload: &[u8]) -> Vec<(String, String)> {
        let amz_date = chrono::Utc::now().format("%Y%m%dT%H%M%SZ").to_string();
        self.headers_at(method, url, payload, &amz_date)
    }

    fn redact(&self, text: &str) -> String {
        self.credentials.redact(text)
    }
}

/// The HTTP client of a Bedrock backend table (`table`, e.g. `[embedders.titan]`): its
/// requests signed for `region` with the credentials of the standard chain. Under
/// `--offline` no request is made, so no credentials are read.
pub fn bedrock_client(
    table: &str,
    http: &HttpSettings,
    region: &str,
    offline: bool,
) -> Result<HttpClient, Error> {
    let client = HttpClient::new(http.clone(), None);
    if offline {
        return Ok(client);
    }
    let credentials = AwsCredentials::from_chain().map_err(|problem| {
        Error::Usage(format!(
            "{table}: {problem}\n    hint: export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN), or set AWS_PROFILE; or pass --offline to use only cached answers"
        ))
    })?;
    Ok(client.with_signer(Box::new(BedrockSigner::new(credentials, region))))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The credentials of AWS's published SigV4 test suite.
    fn suite_credentials(token: Option<&str>) -> AwsCredentials {
        AwsCredentials::new(
            "AKIDEXAMPLE",
            "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            token,
        )
    }

    fn headers(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .collect()
    }

    /// The suite's request to `example.amazonaws.com` (service `service`, us-east-1).
    fn suite_signature(
        method: &str,
        query: &str,
        extra: &[(&str, &str)],
        payload: &[u8],
        token: Option<&str>,
    ) -> String {
        let mut signed = headers(&[
            ("Host", "example.amazonaws.com"),
            ("X-Amz-Date", "20150830T123600Z"),
        ]);
        signed.extend(headers(extra));
        authorization(
            &Signable {
                method,
                path: "/",
                query,
                headers: &signed,
                payload,
            },
            &suite_credentials(token),
            &Scope {
                region: "us-east-1",
                service: "service",
                amz_date: "20150830T123600Z",
            },
        )
    }

    const SUITE_PREFIX: &str =
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, ";

    #[test]
    fn the_published_test_suite_vectors_are_reproduced() {
        // get-vanilla.authz, post-vanilla.authz, get-vanilla-query-order-key-case.authz.
        assert_eq!(
            suite_signature("GET", "", &[], b"", None),
            format!("{SUITE_PREFIX}SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31")
        );
        assert_eq!(
            suite_signature("POST", "", &[], b"", None),
            format!("{SUITE_PREFIX}SignedHeaders=host;x-amz-date, Signature=5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b")
        );
        assert_eq!(
            suite_signature("GET", "Param2=value2&Param1=value1", &[], b"", None),
            format!("{SUITE_PREFIX}SignedHeaders=host;x-amz-date, Signature=b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500")
        );
    }

    #[test]
    fn the_canonical_request_of_get_vanilla_query_order_key_is_the_suites() {
        let signed = headers(&[
            ("Host", "example.amazonaws.com"),
            ("X-Amz-Date", "20150830T123600Z"),
        ]);
        let request = Signable {
            method: "GET",
            path: "/",
            query: "Param1=value2&Param1=Value1",
            headers: &signed,
            payload: b"",
        };
        assert_eq!(
            canonical_request(&request),
            "GET\n/\nParam1=Value1&Param1=value2\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn botocore_signs_form_bodies_and_session_tokens_the_same_way() {
        // Expected values: scripts/sigv4_vectors.py (botocore's SigV4Auth).
        let form = suite_signature(
            "POST",
            "",
            &[("Content-Type", "application/x-www-form-urlencoded")],
            b"Param1=value1",
            None,
        );
        assert_eq!(form, format!("{SUITE_PREFIX}SignedHeaders=content-type;host;x-amz-date, Signature=ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a"));
        let token = "AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPfIeoIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbqBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA==";
        let with_token = suite_signature("POST", "", &[("X-Amz-Security-Token", token)], b"", None);
        assert_eq!(with_token, format!("{SUITE_PREFIX}SignedHeaders=host;x-amz-date;x-amz-security-token, Signature=85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead"));
    }

    #[test]
    fn a_bedrock_request_is_signed_as_botocore_signs_it() {
        // Expected value: scripts/sigv4_vectors.py, a Titan v2 invoke in eu-central-1 with
        // a session token; the model id's `:` is sent as %3A and signed as %253A.
        let signer = BedrockSigner::new(
            AwsCredentials::new(
                "AKIDEXAMPLE",
                "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
                Some("session-token-example"),
            ),
            "eu-central-1",
        );
        let headers = signer.headers_at(
            Method::Post,
            "https://bedrock-runtime.eu-central-1.amazonaws.com/model/amazon.titan-embed-text-v2%3A0/invoke",
            br#"{"inputText":"hello","dimensions":256,"normalize":true}"#,
            "20260115T083000Z",
        );
        assert_eq!(
            headers,
            vec![
                ("x-amz-date".to_owned(), "20260115T083000Z".to_owned()),
                ("x-amz-security-token".to_owned(), "session-token-example".to_owned()),
                ("authorization".to_owned(), "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260115/eu-central-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date;x-amz-security-token, Signature=b68680b4854f5aa475e2ad613504a924f776ac18ba1f255a4b621cbbd2b3e52e".to_owned()),
            ]
        );
    }

    #[test]
    fn urls_split_into_host_path_and_query() {
        assert_eq!(
            split_url("http://127.0.0.1:8080/model/a%3A0/invoke?x=1"),
            ("127.0.0.1:8080".to_owned(), "/model/a%3A0/invoke", "x=1")
        );
        assert_eq!(
            split_url("https://Bedrock-Runtime.us-east-1.amazonaws.com:443/m"),
            (
                "bedrock-runtime.us-east-1.amazonaws.com".to_owned(),
                "/m",
                ""
            )
        );
    }
}
