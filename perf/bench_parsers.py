"""Every reply parser on hostile replies: does any take more than linear time?

A model's reply is untrusted text: degenerate repetition (a markdown rule of asterisks,
thousands of blank lines, an unclosed bracket repeated) is what small models produce when
they loop. A regular expression with nested or ambiguous quantifiers can take exponential
time on such text (a rule of 40 asterisks once took 9 s in the MCQ label-line pattern) or
quadratic time (a reply of blank lines in the VQA answer-line search). This script builds
replies of ``--size`` characters from hostile pieces (each piece repeated, and random
mixtures), runs every parser that reads a model's or a judge's reply on each, and reports
the slowest reply in seconds and how a parser's time grows with the reply: each reply is
also read at a quarter of the size, and the growth is the time at full size over the time
at a quarter (linear: about 4, quadratic: about 16), taken over the replies that cost at
least 20 ms at full size (below that, timer noise decides), each the least of three runs. Each call runs under an alarm of
``--limit`` seconds, so an exponential pattern shows as a timeout, not a hang.

Usage: python perf/bench_parsers.py [--size 200000] [--limit 5]
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from inspect_medreason.cmb.scorer import extract_cmb_safe, extract_cmb_upstream, parse_clin
from inspect_medreason.extraction import extract_label, parse_open_reply
from inspect_medreason.files import write_text_atomically
from inspect_medreason.gemex.dataset import parse_boxes, parse_label_set
from inspect_medreason.gemex.scorer import parse_ar, parse_gemex_reply
from inspect_medreason.judges import parse_correctness, parse_judge_reply
from inspect_medreason.lazy_dataset import collection_paused
from inspect_medreason.med_cmr.scorer import parse_med_cmr_reply
from inspect_medreason.short_answers import final_answer, yes_no

RESULTS = Path(__file__).parent / "results" / "parsers.json"
OPTIONS = [("A", "Pneumothorax"), ("B", "Pleural effusion"), ("C", "Consolidation"),
           ("D", "None of the above")]  # fmt: skip
PARSERS: dict[str, Callable[[str], Any]] = {
    "MCQ label (extract_label)": lambda text: extract_label(text, OPTIONS),
    "open reply (parse_open_reply)": parse_open_reply,
    "judge score (parse_judge_reply)": parse_judge_reply,
    "grader verdict (parse_correctness)": parse_correctness,
    "VQA answer line (final_answer)": final_answer,
    "VQA yes/no (yes_no)": yes_no,
    "CMB multi-answer, safe": lambda text: extract_cmb_safe(text, OPTIONS, True),
    "CMB multi-answer, upstream": lambda text: extract_cmb_upstream(text, True),
    "CMB-Clin ratings (parse_clin)": parse_clin,
    "GEMeX reply (parse_gemex_reply)": parse_gemex_reply,
    "GEMeX answer rating (parse_ar)": parse_ar,
    "GEMeX boxes (parse_boxes)": parse_boxes,
    "GEMeX label set (parse_label_set)": lambda text: parse_label_set(text, set("ABCDEFGH")),
    "Med-CMR judge (parse_med_cmr_reply)": parse_med_cmr_reply,
}
# Pieces that meet the patterns' quantifiers: wrappers, markers, brackets, separators, space.
PIECES = [
    "*", "**", "_", "__", "'", "`", "$", "$$", "(", "[", "{", "}", "<", " ", "\t", "\n", "\r\n",
    "\u3000", "\\", "\\boxed{", "\\text{", "```", "```json", "<answer>", "<reason>", "<location>",
    "answer", "Answer: ", "Answer:**", "answer:\n", "final ", "the answer is ", "option ",
    "is ", "not ", "I ", "I choose ", "B is correct ", "A", "a", "B ", "A)", "A.", "(A) ",
    "**B**\n", "A, ", "A or ", "- ", ", ", " , ", "、", "：", ": ", "答案", "答案是", "选", "选项",
    '"answer": ', '{"score": ', "[1, 2, 3, ", "[0.5,", "-1.", "1.1.1", "12", "....",
]  # fmt: skip
MIXTURES = 20


def hostile_replies(size: int) -> Iterator[tuple[str, str]]:
    """(name, text): each piece repeated to ``size`` characters, then random mixtures."""
    for piece in PIECES:
        yield f"{piece!r} repeated", piece * max(1, size // len(piece))
    rng = random.Random(0)
    for index in range(MIXTURES):
        text = "".join(rng.choice(PIECES) for _ in range(size // 4))
        yield f"mixture {index}", text[:size]
    yield "nested brackets", "{" * (size // 2) + "}" * (size // 2)
    yield "spaces, then a statement", " " * (size - 9) + "Answer: B"


class ParserTimeout(Exception):
    pass


@contextmanager
def alarm(seconds: int) -> Iterator[None]:
    def expire(*_: Any) -> None:
        raise ParserTimeout

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def timed(parse: Callable[[str], Any], text: str, limit: int) -> tuple[float, str | None]:
    """Seconds one call takes, and what went wrong (a timeout, an exception) if anything.
    The garbage collector is paused during the call, as ``timeit`` does: a collection that
    happens to fall in one call would pass for growth."""
    started = time.perf_counter()
    try:
        with alarm(limit), collection_paused():
            parse(text)
    except ParserTimeout:
        return time.perf_counter() - started, f"over {limit} s"
    except Exception as error:  # a parser must give a value or no answer, never raise
        return time.perf_counter() - started, type(error).__name__
    return time.perf_counter() - started, None


GROWTH_FLOOR_SECONDS = 0.02


def measure(size: int, limit: int) -> dict[str, Any]:
    rows: dict[str, dict[str, Any]] = {}
    # Built once for every parser (the random mixtures alone are 20 joins of 50,000 pieces).
    replies = list(hostile_replies(size))
    quarter = dict(hostile_replies(size // 4))
    for name, parse in PARSERS.items():
        worst: tuple[float, str] = (0.0, "")
        growth: tuple[float, str] = (0.0, "")
        failures: list[str] = []
        for reply_name, text in replies:
            seconds, failure = timed(parse, text, limit)
            if failure is not None:
                failures.append(f"{reply_name}: {failure}")
                continue
            worst = max(worst, (seconds, reply_name))
            if seconds >= GROWTH_FLOOR_SECONDS:
                # the least of three runs at each size: a single run's timer noise and warm-up
                # (a pattern's first compilation) would pass for growth
                full = min(seconds, *(timed(parse, text, limit)[0] for _ in range(2)))
                small = min(timed(parse, quarter[reply_name], limit)[0] for _ in range(3))
                growth = max(growth, (full / max(small, 1e-6), reply_name))
        rows[name] = {
            "worst_seconds": round(worst[0], 4),
            "worst_reply": worst[1],
            "growth_4x_size": round(growth[0], 1) if growth[1] else None,
            "growth_reply": growth[1] or None,
            "failures": failures,
        }
        print(f"{name}: worst {worst[0]:.4f} s on {worst[1]}; growth over 4x size "
              f"{growth[0]:.1f} ({growth[1] or '-'})" + (f"; FAILURES {failures}" if failures else ""),
              flush=True)  # fmt: skip
    return {
        "reply_chars": size,
        "replies": len(replies),
        "limit_seconds": limit,
        "growth": "time at full size / time at a quarter (linear about 4, quadratic about 16), "
        f"over replies of at least {GROWTH_FLOOR_SECONDS * 1000:.0f} ms",
        "machine": platform.platform(),
        "date": time.strftime("%Y-%m-%d"),
        "parsers": rows,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description="reply parsers on hostile replies")
    parser.add_argument("--size", type=int, default=200_000, help="characters per reply")
    parser.add_argument("--limit", type=int, default=5, help="seconds allowed per call")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    result = measure(args.size, args.limit)
    write_text_atomically(args.output, json.dumps(result, indent=2) + "\n", force=True)
    failed = sum(len(row["failures"]) for row in result["parsers"].values())
    print(f"{len(PARSERS)} parsers x {result['replies']} replies: {failed} failure(s)")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
