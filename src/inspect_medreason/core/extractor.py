"""The extractor judge: a model asked which option a reply chose, for the replies the rules
leave unread (the route VLMEvalKit and MMMU-Pro take after their own rules).

Bound with ``--model-role extractor=...``; without that role nothing here runs and no
metric, score key or request changes. With it:

- every reply the rules leave unread (``extraction.NO_ANSWER_METHODS``, but not an empty or
  all-thinking reply: it has nothing to read) is sent, with the question and the options,
  fenced as the judges fence a candidate (``judges.fence_id``; what the extractor echoes of
  the reply is never read as its answer), and the extractor answers
  ``{"chosen_option": "<label or none>"}``; "none" is a reading (the reply chose nothing);
  a reply naming no label of the question, or a failed call, is an extractor failure:
  unscored, counted and explained, never a zero;
- a share ``check_rate`` of the replies the rules *did* read (chosen by a hash of the sample
  id, so the same cases whatever the order or the epoch) is sent as well, to measure the
  agreement between rules and extractor on cases both read without sending every reply;
- ``accuracy_extracted`` is the accuracy when the rules' label stands where the rules read
  one and the extractor's is taken where they did not; it is reported beside ``accuracy``
  (the rules' own), never replacing it. ``extractor_agreement`` is the share of the sampled
  read replies the extractor read the same way (``extractor_agreement_cases`` of them).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from inspect_ai.model import model_roles
from pydantic import BaseModel, Field

from inspect_medreason.core.errors import TaskArgumentError
from inspect_medreason.core.extraction import (
    NO_ANSWER_METHODS,
    LabelExtraction,
    json_objects,
    strip_thinking,
)
from inspect_medreason.core.judges import (
    JudgeOutcome,
    JudgeSettings,
    Verdict,
    fence_id,
    grader_templates,
    judge_model,
    judge_request,
    run_judge,
    short_repr,
)
from inspect_medreason.core.metrics import (
    EXTRACTED_CORRECT,
    EXTRACTOR_AGREES,
    EXTRACTOR_ASKED,
    EXTRACTOR_FAILED,
    EXTRACTOR_READ,
)

EXTRACTOR_ROLE = "extractor"
EXTRACTOR_PROMPTS = "extractor"
EXTRACTOR_FORMAT = '{"chosen_option": "<one of the labels, or none>"}'
NONE_CHOSEN = "none"
# Methods after which there is nothing for an extractor to read either.
NOTHING_TO_READ = frozenset({"empty", "thinking_only"})
# The extractor reads the reply's tail: final answers are stated at the end, and a runaway
# reply must not cost a runaway request.
MAX_SENT_CHARS = 12_000


class ExtractorChoice(BaseModel):
    """What the extractor must return."""

    chosen_option: str = Field(description="The label of the option the reply chose, or none")


def extractor_bound() -> bool:
    """Whether this run binds the ``extractor`` role (nothing changes when it does not)."""
    return EXTRACTOR_ROLE in model_roles()


def check_rate(value: Any) -> float:
    """``extractor_check_rate`` as a share in [0, 1], or a clear refusal."""
    try:
        rate = float(value)
    except (TypeError, ValueError):
        rate = math.nan
    if not 0.0 <= rate <= 1.0:
        raise TaskArgumentError(
            f"extractor_check_rate={value!r}: expected a share between 0 and 1 of the replies "
            "the rules read to send to the extractor as well (0: only unread replies)"
        )
    return rate


def in_check_sample(sample_id: Any, rate: float) -> bool:
    """Whether a read reply is sent for the agreement check: a stable hash of the sample id
    below ``rate`` (the same cases on every run and epoch)."""
    if rate <= 0.0:
        return False
    digest = hashlib.sha256(str(sample_id).encode("utf-8", "surrogatepass")).hexdigest()
    return int(digest[:12], 16) / 16**12 < rate


def extractor_parser(labels: Sequence[str]) -> Callable[[str], tuple[Verdict | None, str]]:
    """Read ``{"chosen_option": ...}``: the verdict's score is the chosen label's position
    from 1 (0: none chosen); a label the question does not have is an unusable reply."""
    listing = "/".join(labels)

    def parse(text: str) -> tuple[Verdict | None, str]:
        found = [c for c in json_objects(text) if "chosen_option" in c]
        if not found:
            return None, "no JSON object with a 'chosen_option' field"
        value = found[-1]["chosen_option"]
        if not isinstance(value, str):
            return None, f"'chosen_option' is {short_repr(value)}, not a label"
        stated = value.strip().strip("()[]").strip().rstrip(".")
        if stated.casefold() == NONE_CHOSEN:
            return Verdict(0, NONE_CHOSEN), ""
        exact = [label for label in labels if label == stated]
        folded = [label for label in labels if label.casefold() == stated.casefold()]
        chosen = exact or folded
        if len(chosen) != 1:
            return None, f"'chosen_option' is {short_repr(value)}, not one of {listing} or none"
        return Verdict(list(labels).index(chosen[0]) + 1, chosen[0]), ""

    return parse


@dataclass(frozen=True)
class ExtractorReading:
    """What the extractor said of one reply: a label, ``none`` (label None, no failure), or
    a failure (label None, ``failure`` says why)."""

    label: str | None
    failure: str | None
    outcome: JudgeOutcome
    why_sent: str
    sent_chars: int

    def said(self) -> str:
        if self.failure is not None:
            return "failed"
        return self.label or NONE_CHOSEN

    def as_metadata(self) -> dict[str, Any]:
        return {
            "why_sent": self.why_sent,
            "said": self.said(),
            "label": self.label,
            "failure": self.failure,
            "sent_chars": self.sent_chars,
            "attempts": self.outcome.attempts,
            "raw_replies": self.outcome.raw_replies,
            "cost": {
                "input_tokens": self.outcome.input_tokens,
                "output_tokens": self.outcome.output_tokens,
                "seconds": round(self.outcome.seconds, 3),
            },
            "generation": self.outcome.generation,
        }


def extractor_messages(
    question: str, options: list[tuple[str, str]], reply: str
) -> tuple[list[Any], str]:
    """The extractor's request for one reply, and the reply text as sent (its tail, without
    its thinking block)."""
    sent = strip_thinking(reply).text.strip()[-MAX_SENT_CHARS:]
    templates = grader_templates(EXTRACTOR_PROMPTS)
    text = templates.templates[f"{EXTRACTOR_PROMPTS}_user"].render(
        question=question,
        options="\n".join(f"{label}. {text}" for label, text in options),
        labels=", ".join(label for label, _ in options),
        model_reply=sent,
        fence_id=fence_id(sent),
    )
    system = templates.templates[f"{EXTRACTOR_PROMPTS}_system"].text
    return judge_request(system, text, []), sent


async def read_with_extractor(
    question: str,
    options: list[tuple[str, str]],
    reply: str,
    settings: JudgeSettings,
    why_sent: str,
) -> ExtractorReading:
    """Ask the ``extractor`` role which option ``reply`` chose."""
    labels = [label for label, _ in options]
    messages, sent = extractor_messages(question, options, reply)
    outcome = await run_judge(
        EXTRACTOR_ROLE,
        judge_model(EXTRACTOR_ROLE, False),
        messages,
        grader_templates(EXTRACTOR_PROMPTS),
        settings,
        parse=extractor_parser(labels),
        expected=EXTRACTOR_FORMAT,
        schema=ExtractorChoice,
        candidate=sent,
        role=EXTRACTOR_ROLE,
    )
    if outcome.score is None:
        failure = outcome.failure or "the extractor gave no usable reply"
        return ExtractorReading(None, failure, outcome, why_sent, len(sent))
    label = None if outcome.score == 0 else labels[outcome.score - 1]
    return ExtractorReading(label, None, outcome, why_sent, len(sent))


def why_to_send(extraction: LabelExtraction, sample_id: Any, rate: float) -> str | None:
    """Why this reply goes to the extractor ("unread", "agreement check"), or None."""
    if extraction.method in NOTHING_TO_READ:
        return None
    if extraction.label is None and extraction.method in NO_ANSWER_METHODS:
        return "unread"
    if extraction.label is not None and in_check_sample(sample_id, rate):
        return "agreement check"
    return None


def extractor_values(
    extraction: LabelExtraction, reading: ExtractorReading | None, target: str
) -> dict[str, float]:
    """The score keys the extractor adds: ``extracted_correct`` (the rules' label where they
    read one, else the extractor's; NaN when the extractor failed on an unread reply),
    whether it was asked, read an unread reply, failed, and agrees with the rules (NaN
    unless both read the reply)."""
    nan = math.nan
    asked = reading is not None
    failed = asked and reading is not None and reading.failure is not None
    if extraction.label is not None:
        chosen: str | None = extraction.label
    elif failed:
        chosen = None
    else:
        chosen = reading.label if reading is not None else None
    agrees = nan
    if reading is not None and extraction.label is not None and reading.label is not None:
        agrees = float(reading.label == extraction.label)
    return {
        EXTRACTED_CORRECT: nan
        if failed and extraction.label is None
        else float(chosen is not None and chosen == target),
        EXTRACTOR_ASKED: float(asked),
        EXTRACTOR_READ: float(
            extraction.label is None and reading is not None and reading.label is not None
        ),
        EXTRACTOR_FAILED: float(failed),
        EXTRACTOR_AGREES: agrees,
    }


def extractor_record(rate: float) -> dict[str, Any]:
    """The extractor's choices for the eval log's task metadata (whether the role was bound,
    and to what, is in the log's ``model_roles``; each score records what it said)."""
    templates = grader_templates(EXTRACTOR_PROMPTS)
    return {
        "role": EXTRACTOR_ROLE,
        "used_only_when_bound": True,
        "check_rate": rate,
        "sent": f"replies the rules leave unread (not empty or all-thinking ones), and a share "
        f"check_rate of read ones by a hash of the sample id; the last {MAX_SENT_CHARS} "
        "characters of the reply without its thinking block",
        "format": EXTRACTOR_FORMAT,
        "settings": asdict(JudgeSettings()),
        "templates": templates.log_record(),
    }
