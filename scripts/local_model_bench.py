#!/usr/bin/env python3
"""Embedding throughput on the BEIR SciFact corpus (5,183 abstracts): hyde-eval's
`local` provider against sentence-transformers (torch, CPU), same model files, same
machine, same run. Prints docs/s for both and their ratio. Run it through
scripts/local_model_bench.sh, which builds hyde-eval, makes the venv and fetches the
model; by hand:

    python scripts/local_model_bench.py HYDE_EVAL_BINARY MODEL_DIR SCIFACT_DIR [REPEATS]

Both sides embed every abstract as title + " " + text and exclude model loading:
hyde-eval's figure is the `embed_facts_ms` stage of `hyde-eval run --configurations
dense` (timings.json); sentence-transformers' is `encode(..., batch_size=32)` with
torch's default thread count. With REPEATS > 1 (default 1) each side runs that many
times, alternating, and the best time of each counts.

It also prints the arithmetic both sides do (the same: the model's multiply-adds over
each abstract's tokens, truncated as the model truncates) and the rate each reaches,
in GFLOPS, to set against the processor's peak (scripts/fma_peak.sh).
"""
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
from sentence_transformers import SentenceTransformer


def write_dataset(scifact, destination):
    """SciFact's test split as a hyde-eval dataset (as tests/local_model.rs writes it)."""
    judged = set()
    qrels = ["query_id\tfact_id\tgrade"]
    for line in (scifact / "qrels" / "test.tsv").read_text().splitlines()[1:]:
        query, doc, grade = line.strip().split("\t")
        judged.add(query)
        qrels.append(f"{query}\t{doc}\t{grade}")
    texts, facts = [], []
    for line in (scifact / "corpus.jsonl").read_text().splitlines():
        document = json.loads(line)
        content = document["title"] + " " + document["text"]
        texts.append(content)
        facts.append(json.dumps({"id": document["_id"], "content": content}))
    queries = []
    for line in (scifact / "queries.jsonl").read_text().splitlines():
        query = json.loads(line)
        if query["_id"] in judged:
            queries.append(json.dumps({"id": query["_id"], "text": query["text"]}))
    destination.mkdir(parents=True)
    (destination / "dataset.toml").write_text('name = "scifact-test"\nk = [10]\n')
    (destination / "facts.jsonl").write_text("\n".join(facts) + "\n")
    (destination / "queries.jsonl").write_text("\n".join(queries) + "\n")
    (destination / "qrels.tsv").write_text("\n".join(qrels) + "\n")
    return texts


def hyde_eval_seconds(binary, model_dir, dataset, reports):
    subprocess.run(
        [binary, "run", "--quiet", "--embedder", "local", "--configurations", "dense",
         "--model-dir", model_dir, "--dataset", dataset, "--output-dir", reports],
        check=True, stdout=subprocess.DEVNULL,
    )
    report = Path(reports) / "scifact-test"
    timings = json.loads((report / "timings.json").read_text())
    results = json.loads((report / "results.json").read_text())
    ndcg = results["configurations"][0]["macro"]["ndcg@10"]
    return timings["stages_ms"]["embed_facts_ms"] / 1000.0, ndcg


def encoder_flops(config, lengths):
    """Floating-point operations of a BERT encoder over sequences of `lengths` tokens
    (a multiply-add is two): per layer and token, the Q, K, V and output projections
    (4 h^2) and the feed-forward pair (2 h i); per layer and sequence, the attention
    scores and their weighted sum (2 L^2 h). Softmax, GELU and layer norms are left out."""
    hidden, inner = config["hidden_size"], config["intermediate_size"]
    per_token = 4 * hidden * hidden + 2 * hidden * inner
    multiply_adds = sum(length * per_token + 2 * length * length * hidden for length in lengths)
    return 2 * config["num_hidden_layers"] * multiply_adds


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    binary, model_dir, scifact = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    repeats = int(sys.argv[4]) if len(sys.argv) == 5 else 1
    with tempfile.TemporaryDirectory() as work:
        dataset = Path(work) / "scifact-test"
        texts = write_dataset(scifact, dataset)
        model = SentenceTransformer(model_dir, device="cpu")
        ours, theirs, ndcg = [], [], None
        for repeat in range(repeats):
            seconds, ndcg = hyde_eval_seconds(binary, model_dir, dataset, f"{work}/reports{repeat}")
            ours.append(seconds)
            started = time.perf_counter()
            model.encode(texts, batch_size=32, convert_to_numpy=True)
            theirs.append(time.perf_counter() - started)
    config = json.loads((Path(model_dir) / "config.json").read_text())
    lengths = [len(ids) for ids in model.tokenizer(
        texts, truncation=True, max_length=model.max_seq_length)["input_ids"]]
    flops = encoder_flops(config, lengths)
    docs = len(texts)
    ours_rate, theirs_rate = docs / min(ours), docs / min(theirs)
    print(f"SciFact corpus: {docs} abstracts; best of {repeats} run(s) each; "
          f"torch {torch.__version__} with {torch.get_num_threads()} threads")
    print(f"hyde-eval local (packed BERT):   {ours_rate:8.1f} docs/s  ({min(ours):.1f} s; dense nDCG@10 {ndcg:.4f})")
    print(f"sentence-transformers (torch):   {theirs_rate:8.1f} docs/s  ({min(theirs):.1f} s)")
    print(f"ratio hyde-eval / sentence-transformers: {ours_rate / theirs_rate:.2f}")
    print(f"arithmetic: {sum(lengths)} tokens, {flops / 1e12:.1f} TFLOP; "
          f"hyde-eval {flops / min(ours) / 1e9:.0f} GFLOPS, "
          f"sentence-transformers {flops / min(theirs) / 1e9:.0f} GFLOPS")


if __name__ == "__main__":
    main()
