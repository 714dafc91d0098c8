"""Knowledge base benchmark: ingestion throughput and retrieval recall@k.

    python bench/kb_bench.py [--services 24] [--seed 7] [--extra PATH ...]

A generated corpus: one Markdown page per service, each with questions of five kinds:

* ``direct``    the answer's chunk holds the question's words ("Escalations for X go to …");
* ``summary``   the answer's chunk never names the service ("It runs in the … region"): only
                its document (title, introduction, summaries) says which service it is about;
* ``neighbour`` the question's words are in one chunk, the answer in the next one of a long
                section (longer than a parent returned whole);
* ``rewrite-en`` the question uses other words than the document (wrong passwords vs failed
                authentication attempts);
* ``rewrite-zh`` the question is Chinese, the document English.

A question counts as answered at k when one of the first k passages comes from the right
document and contains the answer string.  Ingestion embeds with the real all-MiniLM-L6-v2
(numpy) into a fresh knowledge base, so nothing is cached.

Rewriting here is a deterministic stand-in for the ``fast`` model: a scripted model that
rewrites with a fixed phrase table (what an LLM would be asked to do: synonyms, a translation
of the Chinese).  It exercises the real rewriting code path, but its rewrites are only as
good as that table; real LLM rewrites will differ.  HyDE is not measured (a scripted
hypothetical answer would only measure the script).  ``--extra`` also ingests real files
(e.g. ``README.md src/shiyi/knowledge``) for a throughput number on real text.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from shiyi.app import open_knowledge
from shiyi.config import load_settings
from shiyi.index.embeddings import MiniLMEmbedder
from shiyi.knowledge import KnowledgeBase, SearchOptions
from shiyi.knowledge.rewrite import TOOL_NAME
from shiyi.llm.scripted import ScriptedModel, ScriptedReply, ScriptedRequest, call

KS = (1, 3, 5)
NAMES = [
    "Falcon", "Heron", "Osprey", "Kestrel", "Plover", "Avocet", "Bittern", "Curlew", "Dunlin",
    "Egret", "Fulmar", "Gannet", "Harrier", "Ibis", "Jacana", "Kittiwake", "Lapwing", "Merlin",
    "Nightjar", "Oriole", "Puffin", "Quail", "Redstart", "Siskin", "Tern", "Upupa", "Vireo",
    "Wagtail", "Xenops", "Yellowhammer", "Zitting", "Auklet",
]  # fmt: skip
PURPOSES = ["payments platform", "search service", "analytics warehouse", "notification hub",
            "identity provider", "billing engine", "media pipeline", "feature store"]  # fmt: skip
REGIONS = ["eu-west-2", "us-east-1", "ap-south-1", "sa-east-1", "eu-central-1", "us-west-2",
           "ap-northeast-1", "ca-central-1"]  # fmt: skip
PEOPLE = [
    "Priya Raman", "Marco Bellini", "Lena Vogel", "Tomas Novak", "Aiko Tanaka", "Omar Haddad",
    "Sofia Lindqvist", "Ravi Menon", "Chen Jing", "Nadia Petrova", "Lucas Moreau",
    "Grace Okafor", "Ivan Horvat", "Mei Lin", "Jonas Berg", "Ana Costa",
]  # fmt: skip
COMPONENTS = ["message broker", "primary database", "cache tier", "ingest workers",
              "object storage gateway", "scheduler"]  # fmt: skip
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
FILLER = [
    "Dashboards for this service are reviewed every morning by the on-duty operator.",
    "Configuration changes are announced in the team channel a day before rollout.",
    "The runbook lists the commands for routine tasks and who is allowed to run them.",
    "Capacity is reviewed each quarter against the growth forecast from product teams.",
    "Incidents receive a written review within a week, with actions assigned to owners.",
    "Production access is granted per request and expires automatically after twelve hours.",
    "Alerts that fire more than twice a week without action are tuned or removed.",
    "Deployments go out in small batches and pause automatically when error rates rise.",
    "Log retention follows the company policy for operational data of this category.",
    "Load tests run before each major release on a copy of the production topology.",
    "Runbooks are checked twice a year by someone who did not write them.",
    "Secrets are stored in the vault and never written to configuration files.",
]
PRACTICES = [
    "Every change to {name} is reviewed by a second engineer before it is merged.",
    "{name} publishes its service level objectives on the internal status page.",
    "New engineers shadow the {name} on-call rotation for two weeks before joining it.",
    "The {name} dashboards show latency, error rate and saturation for each endpoint.",
    "Feature flags for {name} are cleaned up within a month of a full rollout.",
    "{name} keeps its architecture decision records next to the code.",
    "Dependencies of {name} are updated weekly by an automated pull request.",
    "Chaos experiments against {name} run in the staging environment every sprint.",
]
# The scripted rewriter's phrase table: what a fast model would rephrase or translate.
PHRASES = {
    "wrong passwords": "failed authentication attempts",
    "blocks the account": "locks the account",
    "kicks out": "locks the account",
    "logins": "authentication attempts",
    "的数据库备份": " database backups",
    "保留多久": " retention how long are backups retained",
    "多少天": " days retained",
}


@dataclass(slots=True, frozen=True)
class Question:
    kind: str
    text: str
    answer: str
    title: str


def service_page(name: str, rng: random.Random) -> tuple[str, list[Question]]:
    """One service's page and its five questions."""
    title = f"Service {name}"
    purpose, region = rng.choice(PURPOSES), rng.choice(REGIONS)
    person, component = rng.choice(PEOPLE), rng.choice(COMPONENTS)
    day, hour = rng.choice(DAYS), rng.randrange(0, 24)
    window = f"{day} at {hour:02d}:00 UTC"
    tries, minutes, days = rng.randrange(3, 12), rng.randrange(5, 60), rng.randrange(14, 400)
    nodes = rng.randrange(3, 40)
    # Long enough that the next paragraph cannot join its chunk (900 characters).
    lead = (
        f"The maintenance window for the {component} of {name} is given in the "
        "paragraph below. During the window the on-duty operator may restart nodes, apply "
        "patches and rotate credentials without a separate change request, provided the "
        "change was announced in the team channel at least one day before. Work that cannot "
        "finish inside the window is rolled back, and the rollback is recorded in the change "
        "log with the reason. Customers are told about the window through the status page, "
        "and the support team receives the same notice so that they can answer questions "
        "about short interruptions. Emergency changes outside the window need the approval "
        "of the service owner and are reviewed at the next weekly operations meeting, "
        "together with any alert that fired while the work was going on. The operator "
        "also confirms afterwards that backups and replication caught up with the changes."
    )
    filler = rng.sample(FILLER, len(FILLER))
    operations = "\n\n".join(
        [
            *filler[:4],
            lead,
            f"It opens every {window} and lasts three hours; a fifteen-minute buffer follows.",
            *filler[4:],
        ]
    )
    # Pages name their subject often: the name alone must not single out one chunk.
    practices = "\n\n".join(p.format(name=name) for p in rng.sample(PRACTICES, len(PRACTICES)))
    page = (
        f"# {title}\n\n{name} is the {purpose} of the Tern company, run by the platform team."
        f"\n\n## Infrastructure\n\nIt runs in the {region} region on {nodes} nodes.\n\n"
        f"## Operations\n\n{operations}\n\n"
        f"## Contacts\n\nEscalations for {name} go to {person} on the paging rota.\n\n"
        f"## Practices\n\n{practices}\n\n"
        f"## Access\n\nFailed authentication attempts against {name} lock the account after "
        f"{tries} tries, for {minutes} minutes.\n\n"
        f"## Backups\n\nDatabase backups of {name} are retained for {days} days.\n"
    )
    questions = [
        Question("direct", f"Who handles escalations for {name}?", person, title),
        Question("summary", f"Which region does the {name} service run in?", region, title),
        Question(
            "neighbour",
            f"When is the maintenance window for the {component} of {name}?",
            window,
            title,
        ),
        Question(
            "rewrite-en",
            f"How many wrong passwords before {name} blocks the account?",
            f"after {tries} tries",
            title,
        ),
        Question("rewrite-zh", f"{name} 的数据库备份保留多久？", f"{days} days", title),
    ]
    return page, questions


def write_corpus(root: Path, services: int, seed: int) -> list[Question]:
    rng = random.Random(seed)
    questions: list[Question] = []
    for name in NAMES[:services]:
        page, asked = service_page(name, rng)
        (root / f"{name.lower()}.md").write_text(page, encoding="utf-8")
        questions += asked
    return questions


def phrase_rewriter(request: ScriptedRequest) -> ScriptedReply:
    """Deterministic rewrites: the question with the phrase table applied, and its
    English-only words."""
    query = request.last.content
    rewritten = query
    for phrase, replacement in PHRASES.items():
        rewritten = rewritten.replace(phrase, replacement)
    ascii_only = " ".join(w for w in rewritten.replace("？", " ").split() if w.isascii())
    queries = [q for q in dict.fromkeys([rewritten, ascii_only]) if q and q != query]
    return ScriptedReply(tool_calls=(call(TOOL_NAME, queries=queries or [query]),))


CONFIGS: dict[str, dict[str, bool]] = {
    "chunks only": {"rewrite": False, "expand": False, "summaries": False},
    "+summaries": {"rewrite": False, "expand": False, "summaries": True},
    "+expansion": {"rewrite": False, "expand": True, "summaries": False},
    "+rewriting": {"rewrite": True, "expand": False, "summaries": False},
    "all": {"rewrite": True, "expand": True, "summaries": True},
}


def answered(question: Question, passages: list[tuple[str, str]], k: int) -> bool:
    return any(t == question.title and question.answer in x for t, x in passages[:k])


def evaluate(kb: KnowledgeBase, questions: list[Question]) -> None:
    kinds = list(dict.fromkeys(q.kind for q in questions))
    print(f"\n{len(questions)} questions ({len(questions) // len(kinds)} of each kind)")
    print(f"{'config':<13}" + "".join(f"  R@{k:<3}" for k in KS) + "  chars@5  ms/query")
    per_kind: dict[str, dict[str, dict[int, list[bool]]]] = {}
    asyncio.run(kb.search("warm up", SearchOptions(rewrite=False)))  # loads the vector caches
    for name, switches in CONFIGS.items():
        options = SearchOptions(limit=max(KS), **switches)
        hits: dict[int, list[bool]] = {k: [] for k in KS}
        by_kind = per_kind[name] = {kind: {k: [] for k in KS} for kind in kinds}
        chars: list[int] = []
        latencies: list[float] = []
        for question in questions:
            started = time.perf_counter()
            result = asyncio.run(kb.search(question.text, options))
            latencies.append((time.perf_counter() - started) * 1000)
            passages = [(p.doc_title, p.text) for p in result.passages]
            chars.append(sum(len(text) for _, text in passages))
            for k in KS:
                hits[k].append(answered(question, passages, k))
                by_kind[question.kind][k].append(answered(question, passages, k))
        row = "".join(f"  {statistics.mean(hits[k]):.3f}" for k in KS)
        print(
            f"{name:<13}{row}  {statistics.mean(chars):7.0f}  {statistics.median(latencies):8.1f}"
        )
    for k in (1, 5):
        print(f"\nrecall@{k} per kind")
        print(f"{'config':<13}" + "".join(f"{kind:>12}" for kind in kinds))
        for name in CONFIGS:
            cells = "".join(f"{statistics.mean(per_kind[name][kind][k]):>12.3f}" for kind in kinds)
            print(f"{name:<13}{cells}")


def ingest(kb: KnowledgeBase, paths: list[Path], label: str) -> None:
    report = asyncio.run(kb.add(paths))
    if report.failed:
        print(f"failed: {report.failed}", file=sys.stderr)
    counts = kb.counts()
    documents = [d.id for d in kb.documents()]
    chunk_chars = [len(c.text) for c in kb.store.chunks_of_documents(documents)]
    embedded = report.chunks + counts["summaries"]
    print(
        f"{label}: {len(report.added)} files, {report.chunks} chunks "
        f"(mean {statistics.mean(chunk_chars):.0f} chars) + {counts['summaries']} summaries "
        f"in {report.seconds:.1f} s -> {report.chunks / report.seconds:.1f} chunks/s; "
        f"embedding {embedded} texts took {report.embed_seconds:.1f} s "
        f"({report.embed_seconds / report.seconds:.0%} of the time)"
    )


def check_neighbours(kb: KnowledgeBase, questions: list[Question]) -> None:
    """How many neighbour questions really have their answer only in the next chunk."""
    by_title = {d.title: d.id for d in kb.documents()}
    split = 0
    asked = [q for q in questions if q.kind == "neighbour"]
    for question in asked:
        chunks = kb.store.chunks_of_documents([by_title[question.title]])
        lead = next(i for i, c in enumerate(chunks) if "maintenance window for the" in c.text)
        answer = question.answer
        split += answer not in chunks[lead].text and answer in chunks[lead + 1].text
    print(f"neighbour questions answered only by the next chunk: {split}/{len(asked)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--services", type=int, default=24, help=f"at most {len(NAMES)}")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--extra", nargs="*", type=Path, default=[], help="real files to ingest")
    args = parser.parse_args()
    threads = os.environ.get("OPENBLAS_NUM_THREADS", "unset")
    print(f"OPENBLAS_NUM_THREADS={threads}, {os.cpu_count()} CPUs")
    print("embedder: all-MiniLM-L6-v2 (numpy); summaries: extractive (no fast model)")
    print(
        "rewriting: deterministic scripted rewriter (a phrase table standing in for the "
        "fast model), not an LLM"
    )
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        corpus = root / "corpus"
        corpus.mkdir()
        questions = write_corpus(corpus, min(args.services, len(NAMES)), args.seed)
        settings = load_settings(home=root / "home", workspace=root)
        settings.knowledge.summarize_with_model = False
        rewriter = ScriptedModel([phrase_rewriter], repeat_last=True, model_name="phrase-table")
        # No embedding cache: every configuration pays for embedding its queries.
        kb = KnowledgeBase.open(settings, embedder=MiniLMEmbedder(), fast_model=rewriter)
        try:
            ingest(kb, [corpus], "generated corpus")
            check_neighbours(kb, questions)
            evaluate(kb, questions)
        finally:
            kb.close()
        if args.extra:
            extra = open_knowledge(load_settings(home=root / "extra", workspace=root), fast=None)
            try:
                print()
                ingest(extra, [p.resolve() for p in args.extra], "real files")
            finally:
                extra.close()


if __name__ == "__main__":
    main()
