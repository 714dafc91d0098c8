"""A question in a language the embedding model does not read (all-MiniLM-L6-v2 reads
English) is the keyword path's to answer: the vector path votes by the share of the question
in English.  Both backends, the real embedding model."""

from __future__ import annotations

from dataclasses import replace

import pytest

from shiyi.memory.recall.retriever import Retriever
from shiyi.memory.service import Memory
from tests.support.conversations import with_boosts

TURNS = [
    ("budi", "Motor saya mogok lagi di jalan, harus ke bengkel besok pagi."),
    ("budi", "Anak saya demam tinggi semalam, jadi saya tidak narik ojek."),
    ("assistant", "Semoga anakmu cepat sembuh. Jangan lupa beri banyak minum air."),
    ("budi", "Saya mau belajar bahasa Spanyol pelan-pelan, lima menit sehari saja."),
    ("assistant", "For your motorbike, check the spark plug and the battery first."),
    ("budi", "My daughter had a high fever last night, she is resting at home."),
    ("assistant", "Learning Spanish five minutes a day is a good start."),
    ("budi", "Istri saya jualan kue di pasar setiap hari Minggu."),
]


def ranked(retriever: Retriever, question: str) -> list[tuple[str, float]]:
    hits = retriever.search(question, limit=len(TURNS), touch=False)
    return [(hit.id, round(hit.score, 6)) for hit in hits]


def without_vector_vote(memory: Memory) -> Retriever:
    base = with_boosts(memory, language=False)
    votes = dict(base.weights.path_weights, vector=0.0)
    weights = replace(base.weights, path_weights=votes)
    return Retriever(base.store, base.embedder, weights, base.candidates, boosts=base.boosts)


def test_a_question_in_indonesian_is_ranked_without_the_english_models_vote(
    memory: Memory,
) -> None:
    question = "Kapan istri saya jualan di pasar?"  # no word of it English
    found = ranked(memory.retriever, question)
    assert found[0][0] == "turn-7"
    assert found == ranked(without_vector_vote(memory), question)
    assert found != ranked(with_boosts(memory, language=False), question)  # the vote it had


@pytest.mark.parametrize(
    "question", ["When does my wife sell cakes at the market?", "Which day is the market?"]
)
def test_an_english_question_keeps_the_whole_vote(memory: Memory, question: str) -> None:
    assert ranked(memory.retriever, question) == ranked(
        with_boosts(memory, language=False), question
    )
