"""bm25s on a BEIR collection, configured as hyde-eval's `bm25` configuration is by
default: k1 = 0.9, b = 0.4, Lucene's idf, title + " " + text, tokens = runs of Unicode
letters and digits, lower-cased, chatcli's stop words removed (read from hyde-eval's
source), no stemming. Retrieves the top 1,000 for each test query and writes a TREC run.

Usage: bm25s_scifact.py BEIR_DIR STOPWORDS_RS RUN_OUT
Prints one JSON line: seconds for loading, indexing and retrieval (the process's own
wall time is measured by the caller).
"""
import json
import re
import sys
import time

started = time.perf_counter()
import bm25s  # noqa: E402  (imported inside the timed region: it is part of the cost)
import numpy as np  # noqa: E402

beir, stopwords_rs, run_out = sys.argv[1:4]
source = open(stopwords_rs, encoding="utf-8").read()
block = source[source.index("const STOP_WORDS"):]
block = block[block.index("= [") : block.index("];")]
stopwords = re.findall(r'"([^"]+)"', block)

doc_ids, texts = [], []
with open(f"{beir}/corpus.jsonl", encoding="utf-8") as corpus:
    for line in corpus:
        record = json.loads(line)
        doc_ids.append(record["_id"])
        texts.append((record.get("title") or "") + " " + (record.get("text") or ""))
test_queries = set()
with open(f"{beir}/qrels/test.tsv", encoding="utf-8") as qrels:
    for number, line in enumerate(qrels):
        fields = line.rstrip("\n").split("\t")
        if number == 0 and not fields[-1].lstrip("-").isdigit():
            continue
        test_queries.add(fields[0])
query_ids, query_texts = [], []
with open(f"{beir}/queries.jsonl", encoding="utf-8") as queries:
    for line in queries:
        record = json.loads(line)
        if record["_id"] in test_queries:
            query_ids.append(record["_id"])
            query_texts.append(record["text"])
loaded = time.perf_counter()

pattern = r"(?u)[^\W_]+"
corpus_tokens = bm25s.tokenize(texts, lower=True, stopwords=stopwords, token_pattern=pattern, show_progress=False)
retriever = bm25s.BM25(k1=0.9, b=0.4, method="lucene")
retriever.index(corpus_tokens, show_progress=False)
indexed = time.perf_counter()
query_tokens = bm25s.tokenize(query_texts, lower=True, stopwords=stopwords, token_pattern=pattern, show_progress=False)
documents, scores = retriever.retrieve(query_tokens, k=min(1000, len(doc_ids)), show_progress=False, n_threads=0)
retrieved = time.perf_counter()

with open(run_out, "w", encoding="utf-8") as run:
    for query, row, row_scores in zip(query_ids, documents, scores):
        rank = 0
        for document, score in zip(row, row_scores):
            if score <= 0:
                break
            rank += 1
            run.write(f"{query} Q0 {doc_ids[document]} {rank} {float(score):.6f} bm25s\n")
print(json.dumps({
    "load_s": loaded - started,
    "index_s": indexed - loaded,
    "retrieve_s": retrieved - indexed,
    "queries": len(query_ids),
    "documents": len(doc_ids),
}))
