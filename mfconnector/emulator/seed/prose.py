"""Deterministic prose from the sentence pools, and the HTML body Outlook stores it in."""

from __future__ import annotations

import random
from collections.abc import Sequence

from mfconnector.emulator.quoting import escape
from mfconnector.emulator.seed.corpus import MORE_SENTENCES, SENTENCES, SLOTS

__all__ = ["VARIETY_SEED", "Writer", "html_page", "plain"]

VARIETY_SEED = 20260305


def plain(sentences: Sequence[str]) -> list[str]:
    """Pool sentences used as they stand (in documents and long bodies), their ``{slot}``s
    filled with each slot's last value: only ``Writer`` varies them."""
    fixed = {name: options[-1] for name, options in SLOTS.items()}
    return [sentence.format(**fixed) for sentence in sentences]


class Writer:
    """Deterministic prose from the sentence pools."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.variety = random.Random(VARIETY_SEED)

    def sentences(self, topic: str, count: int) -> list[str]:
        """``count`` different sentences of ``topic``, their slots filled."""
        pool = [*SENTENCES[topic], *MORE_SENTENCES[topic]]
        self.rng.randrange(len(SENTENCES[topic]))  # the main generator moves as in 0.2
        chosen = self.variety.sample(pool, min(count, len(pool)))
        return [self._fill(sentence) for sentence in chosen]

    def _fill(self, sentence: str) -> str:
        values = {name: self.variety.choice(options) for name, options in SLOTS.items()}
        return sentence.format(**values)

    def paragraph(self, topic: str, count: int = 3) -> str:
        return " ".join(self.sentences(topic, count))


def html_page(paragraphs: Sequence[str], quoted: str = "") -> str:
    body = "".join(f"<p>{escape(text)}</p>\r\n" for text in paragraphs)
    return (
        '<html>\r\n<head>\r\n<meta http-equiv="Content-Type" content="text/html; '
        'charset=utf-8">\r\n<style>p{margin:0}</style>\r\n</head>\r\n<body>\r\n'
        f'<div dir="ltr">\r\n{body}</div>\r\n{quoted}</body>\r\n</html>\r\n'
    )
