"""LLM judges for the open-ended track: GT_final, VA_answer and RVF_trace, each 0-4.

A judge call returns a :class:`JudgeOutcome`: an integer score with the judge's rationale,
or no score with the reason it failed. A failure is never turned into a number here.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import math
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypedDict

import anyio
from inspect_ai.model import (
    CachePolicy,
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    Content,
    ContentImage,
    ContentText,
    GenerateConfig,
    Model,
    ResponseSchema,
    get_model,
    model_roles,
)
from inspect_ai.util import json_schema
from pydantic import BaseModel, Field

from inspect_medreason.core.errors import TaskArgumentError, UserInputError, is_setup_error
from inspect_medreason.core.extraction import json_objects
from inspect_medreason.core.lineage import judge_lineage
from inspect_medreason.core.params import (
    ParameterGroup,
    SharedParameter,
    coerce_bool,
    coerce_float,
    coerce_int,
)
from inspect_medreason.core.prompts import SHARED, PromptTemplate, context_block, load_template

logger = logging.getLogger(__name__)

JudgeKind = Literal["gt", "va", "rvf"]
JUDGE_KINDS: tuple[JudgeKind, ...] = ("gt", "va", "rvf")
JUDGE_TEMPLATE_NAMES = (
    *(f"judge_{kind}_{part}" for kind in JUDGE_KINDS for part in ("system", "user")),
    "judge_retry",
)
MIN_SCORE, MAX_SCORE = 0, 4
# The default bound on one judge call, in seconds (-T judge_timeout).
DEFAULT_JUDGE_TIMEOUT = 120.0
# What a judge that fails (no usable verdict after its attempts: a provider error, a
# timeout, an unusable reply) does to its sample (-T judge_failure): "unscored" leaves the
# component unscored, counted and explained; "error" makes the sample an error, so that
# Inspect's --fail-on-error and eval-retry act on it.
JudgeFailureMode = Literal["unscored", "error"]
JUDGE_FAILURE_MODES: tuple[JudgeFailureMode, ...] = ("unscored", "error")
# A score written as text must be plain ASCII digits (not "²", not 5,000 digits).
_INTEGER_TEXT = re.compile(r"[+-]?[0-9]{1,3}")


class JudgeScore(BaseModel):
    """What a rubric judge must return."""

    score: int = Field(ge=MIN_SCORE, le=MAX_SCORE, description="Rubric score, 0 to 4")
    rationale: str = Field(description="One or two sentences explaining the score")


@dataclass(frozen=True)
class Verdict:
    """A usable judge reply: its main integer score, rationale and any sub-scores."""

    score: int
    rationale: str
    parts: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class JudgeSettings:
    """Everything about judging that changes a number; recorded in the eval log."""

    # Generation: the judge role's own config decides (--model-role 'grader={model: ...,
    # temperature: 0}'); these fill in what the role leaves unset (the protocol's
    # deterministic decoding).
    temperature: float = 0.0
    seed: int = 42
    max_tokens: int = 512
    retries: int = 2
    structured_output: bool = True
    # Off by default: Inspect's cache (keying, file per reply) cost 15-18% of a judged run's
    # wall at C=30 (perf/bench_judge.py), and a first run gains nothing from it.
    cache: bool = False
    timeout: float = DEFAULT_JUDGE_TIMEOUT
    # None: the judges share the eval's --max-connections (see _judge_generate_config).
    max_connections: int | None = None
    failure: JudgeFailureMode = "unscored"

    @classmethod
    def from_args(
        cls,
        temperature: Any,
        seed: Any,
        max_tokens: Any,
        retries: Any,
        structured_output: Any,
        cache: Any,
        timeout: Any = DEFAULT_JUDGE_TIMEOUT,
        max_connections: Any = None,
        failure: Any = "unscored",
    ) -> JudgeSettings:
        """From `-T`/`-S` values, which arrive as YAML scalars or strings; every value that
        cannot be used is named in one message."""
        problems: list[str] = []

        def read(convert: Callable[[Any, str], Any], value: Any, name: str) -> Any:
            try:
                return convert(value, name)
            except TaskArgumentError as error:
                problems.append(str(error.message))
                return getattr(JUDGE_DEFAULTS, name.removeprefix("judge_"))

        if failure not in JUDGE_FAILURE_MODES:
            problems.append(
                f"-T judge_failure={failure!r}: expected unscored (a failed judge leaves its "
                "component unscored, counted) or error (the sample is an error, for "
                "--fail-on-error and eval-retry)"
            )
        settings = cls(
            temperature=read(coerce_float, temperature, "judge_temperature"),
            seed=read(coerce_int, seed, "judge_seed"),
            max_tokens=read(coerce_int, max_tokens, "judge_max_tokens"),
            retries=read(coerce_int, retries, "judge_retries"),
            structured_output=read(coerce_bool, structured_output, "judge_structured_output"),
            cache=read(coerce_bool, cache, "judge_cache"),
            timeout=read(coerce_float, timeout, "judge_timeout"),
            max_connections=None
            if max_connections is None or max_connections == ""
            else read(coerce_int, max_connections, "judge_max_connections"),
            failure=failure if failure in JUDGE_FAILURE_MODES else "unscored",
        )
        if not 0 < settings.timeout < float("inf"):
            problems.append(f"-T judge_timeout={timeout!r}: expected a positive number of seconds")
        if settings.retries < 0:
            problems.append(f"-T judge_retries={retries!r}: expected 0 or more")
        if settings.max_connections is not None and settings.max_connections < 1:
            problems.append(f"-T judge_max_connections={max_connections!r}: expected 1 or more")
        if problems:
            raise TaskArgumentError("; ".join(problems))
        return settings

    def generation(self, role_config: GenerateConfig | None = None) -> dict[str, Any]:
        """The effective generation settings of a judge: the role's own where it sets them,
        else these defaults; and where each came from, for the log."""
        effective: dict[str, Any] = {}
        source: dict[str, str] = {}
        for name in JUDGE_GENERATION_FIELDS:
            role_value = getattr(role_config, name, None) if role_config is not None else None
            if role_value is not None:
                effective[name], source[name] = role_value, "role"
            else:
                effective[name], source[name] = getattr(self, name), "default"
        return {**effective, "from": source}

    def generate_config(
        self,
        schema: type[BaseModel] = JudgeScore,
        generation: dict[str, Any] | None = None,
        bounds: JudgeBounds | None = None,
        batch: Any = None,
    ) -> GenerateConfig:
        """The judges' generation config for the effective ``generation`` (this object's
        ``generation()`` of a role's config; the defaults when None) and time ``bounds``
        (``judge_bounds``; the judge's own timeout when None); built once per settings,
        reply schema, generation and bounds (building the JSON schema was 6% of a judged
        run's CPU when it was done for every call)."""
        generation = generation or self.generation()
        bounds = bounds or judge_bounds(self)
        config = _judge_generate_config(
            self,
            schema,
            *(generation[name] for name in JUDGE_GENERATION_FIELDS),
            _whole_seconds(bounds.timeout),
            _whole_seconds(bounds.attempt_timeout),
        )
        # The run's --batch reaches a role only this way (Inspect passes a role the run's
        # connections, retries, timeout and cache, not its batch). Added outside the cache:
        # a BatchConfig is not hashable.
        return config if batch is None else config.model_copy(update={"batch": batch})


@dataclass(frozen=True)
class JudgeBounds:
    """How long one judge call may take: ``timeout`` for the whole call (Inspect's retries
    included), ``attempt_timeout`` for each attempt; and where each bound came from."""

    # None: no bound of ours (a batched call with no run or role timeout: the provider's
    # batch window bounds it, see BATCH_BOUND).
    timeout: float | None
    attempt_timeout: float | None
    source: dict[str, str] = field(default_factory=dict)

    def as_record(self) -> dict[str, Any]:
        return {
            "timeout": self.timeout,
            "attempt_timeout": self.attempt_timeout,
            "from": self.source,
        }


def judge_bounds(
    settings: JudgeSettings,
    role_config: GenerateConfig | None = None,
    run_config: GenerateConfig | None = None,
    batched: bool = False,
) -> JudgeBounds:
    """The smallest of the judge's own limits (``judge_timeout``, the role's ``timeout`` and
    ``attempt_timeout``) and the run's (``--timeout``, ``--attempt-timeout``): a judge may
    never hold a run longer than the run allows its own model, nor longer than its own
    limit. An attempt is never allowed longer than the whole call.

    A ``batched`` call waits for its batch (minutes to hours): ``judge_timeout``, a bound on
    one interactive call, does not apply; only the run's and the role's own timeouts do,
    and with neither the batch's own bound (``BATCH_BOUND``) holds."""
    whole: list[tuple[float, str]] = [] if batched else [(settings.timeout, "judge_timeout")]
    attempt: list[tuple[float, str]] = []
    for config, origin in ((role_config, "role"), (run_config, "run")):
        if config is None:
            continue
        if config.timeout is not None:
            whole.append((float(config.timeout), f"{origin} timeout"))
        if config.attempt_timeout is not None:
            attempt.append((float(config.attempt_timeout), f"{origin} attempt_timeout"))
    if not whole:
        if attempt:
            attempt_timeout, attempt_source = min(attempt, key=lambda bound: bound[0])
            return JudgeBounds(
                timeout=None,
                attempt_timeout=attempt_timeout,
                source={"timeout": BATCH_BOUND, "attempt_timeout": attempt_source},
            )
        return JudgeBounds(
            timeout=None,
            attempt_timeout=None,
            source={"timeout": BATCH_BOUND, "attempt_timeout": BATCH_BOUND},
        )
    # min() keeps the first of equal bounds: the judge's own setting names a tie.
    timeout, timeout_source = min(whole, key=lambda bound: bound[0])
    attempt_timeout, attempt_source = min(
        [(timeout, timeout_source), *attempt], key=lambda bound: bound[0]
    )
    return JudgeBounds(
        timeout=timeout,
        attempt_timeout=attempt_timeout,
        source={"timeout": timeout_source, "attempt_timeout": attempt_source},
    )


# What bounds a batched judge call when neither the run nor the role sets a timeout: the
# provider's batch window (Inspect asks OpenAI for completion_window="24h"; a batch not done
# by then expires and its calls fail, leaving their components unscored).
BATCH_BOUND = "the provider's batch window (24 h at OpenAI), then unscored"


def judge_batch(
    role_config: GenerateConfig | None, run_config: GenerateConfig | None
) -> tuple[Any, str]:
    """The batch setting a judge is called with, and where it came from: the role's own
    (``--model-role 'grader={model: ..., batch: true}'``) where it sets one, else the run's
    (``--batch``, ``INSPECT_EVAL_BATCH``, ``eval(batch=...)``), which Inspect does not pass
    on to a role by itself; None when neither batches."""
    for config, origin in ((role_config, "role"), (run_config, "run")):
        if config is not None and config.batch is not None:
            return config.batch, origin
    return None, "none"


def batch_record(batch: Any, origin: str) -> dict[str, Any]:
    """A batch setting as the log records it (a BatchConfig as its fields)."""
    value = batch.model_dump(exclude_none=True) if isinstance(batch, BaseModel) else batch
    return {"batch": value, "from": origin}


def run_generate_config() -> GenerateConfig:
    """The generation config of the run a judge is called in: the model under test's
    (Inspect's public view of it; ``inspect eval --timeout/--attempt-timeout`` land there,
    and ``inspect score`` rebuilds it from the log). Outside a run (a judge called directly)
    there is none, and only the judge's own limits apply."""
    try:
        return get_model().config
    except ValueError:  # "No model specified": no eval or score is running
        return GenerateConfig()


def _whole_seconds(seconds: float | None) -> int | None:
    # GenerateConfig takes whole seconds; a fraction rounds down (never past the bound), to
    # at least 1 (0 would mean no time at all). None: no bound of ours.
    return None if seconds is None else max(1, int(seconds))


# The judge settings' defaults, defined once: every task's and scorer's judge parameters
# default to these.
JUDGE_DEFAULTS = JudgeSettings()
GENERATION_RULE = (
    "a judge's temperature, seed and max_tokens are its model role's own where the role sets "
    "them (--model-role 'grader={model: ..., temperature: 0}'), else settings' values"
)
# What a judge role's own config decides (the rest of a judge's settings are task
# parameters: Inspect gives a role the eval's --max-connections and --timeout over its own).
JUDGE_GENERATION_FIELDS = ("temperature", "seed", "max_tokens")


@functools.cache
def _judge_generate_config(
    settings: JudgeSettings,
    schema: type[BaseModel],
    temperature: float,
    seed: int,
    max_tokens: int,
    timeout: int | None,
    attempt_timeout: int | None,
) -> GenerateConfig:
    response_schema = (
        ResponseSchema(
            name=schema.__name__.lower(),
            json_schema=json_schema(schema),
            description=(schema.__doc__ or "").strip() or None,
            strict=True,
        )
        if settings.structured_output
        else None
    )
    # A config passed to generate() wins over the role's and the eval's, so the bounds are
    # set here already reduced to the smaller of the judge's and the run's (judge_bounds);
    # run_judge enforces the whole-call bound around the call as well. Inspect gives a role
    # the eval's --max-connections over the role's own; judge_max_connections sizes the
    # judges' pool apart from the model under test.
    return GenerateConfig(
        max_connections=settings.max_connections,
        temperature=temperature,
        seed=seed,
        max_tokens=max_tokens,
        response_schema=response_schema,
        attempt_timeout=attempt_timeout,
        timeout=timeout,
    )


@dataclass(frozen=True)
class JudgeTemplates:
    """The judge prompts in use; swapped as a set with ``-T judge_prompts=DIR``."""

    templates: dict[str, PromptTemplate]

    @classmethod
    def load(cls, directory: str | Path | None = None) -> JudgeTemplates:
        missing = [
            name
            for name in JUDGE_TEMPLATE_NAMES
            if directory is not None and not (Path(directory) / f"{name}.txt").is_file()
        ]
        if missing:
            raise TaskArgumentError(
                f"-T judge_prompts={directory}: missing template file(s) "
                + ", ".join(f"{name}.txt" for name in missing)
                + f". A replacement set needs all of {', '.join(n + '.txt' for n in JUDGE_TEMPLATE_NAMES)}"
                " (copy the built-in ones from the package's core/prompts/ folder and edit them)"
            )
        templates = {name: load_template(name, directory) for name in JUDGE_TEMPLATE_NAMES}
        unfenced = [
            f"{name}.txt"
            for name, template in templates.items()
            if ("${candidate_answer}" in template.text or "${candidate_trace}" in template.text)
            and "${fence_id}" not in template.text
        ]
        if unfenced:
            raise TaskArgumentError(
                f"judge_prompts={directory}: {', '.join(unfenced)} put(s) the candidate's text in "
                "the prompt without ${fence_id}: write the markers around it with the id, e.g. "
                "<candidate_answer ${fence_id}> ... </candidate_answer ${fence_id}>, so the "
                "candidate cannot close them (see the built-in templates)"
            )
        return cls(templates)

    def system(self, kind: JudgeKind) -> PromptTemplate:
        return self.templates[f"judge_{kind}_system"]

    def user(self, kind: JudgeKind) -> PromptTemplate:
        return self.templates[f"judge_{kind}_user"]

    @property
    def retry(self) -> PromptTemplate:
        return self.templates["judge_retry"]

    def log_record(self) -> dict[str, dict[str, str]]:
        return {name: template.log_record() for name, template in self.templates.items()}

    @functools.cached_property
    def sha256(self) -> str:
        """One fingerprint of the whole set (each template's own is in ``log_record``)."""
        listing = "".join(f"{name}:{t.sha256}\n" for name, t in sorted(self.templates.items()))
        return hashlib.sha256(listing.encode()).hexdigest()


@dataclass
class JudgeOutcome:
    """One component's result: a score, or None with the reason."""

    kind: str
    score: int | None
    rationale: str
    attempts: int = 0
    by_rule: bool = False
    failure: str | None = None
    raw_replies: list[str] = field(default_factory=list)
    parts: dict[str, int] = field(default_factory=dict)
    # What judging this component cost, over every attempt (tokens as the provider reports
    # them; seconds of wall time, cache hits included).
    input_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0
    # The generation settings the judge was called with, and where each came from.
    generation: dict[str, Any] = field(default_factory=dict)
    # The time bounds the judge was called with (judge_bounds), and where each came from.
    bounds: dict[str, Any] = field(default_factory=dict)
    # Whether the call went through the provider's batch API (judge_batch), and from where.
    batch: dict[str, Any] = field(default_factory=dict)

    def as_metadata(self) -> dict[str, object]:
        return {
            "score": self.score,
            "rationale": self.rationale,
            "attempts": self.attempts,
            "by_rule": self.by_rule,
            "failure": self.failure,
            "raw_replies": self.raw_replies,
            **({"parts": self.parts} if self.parts else {}),
            "cost": {
                "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens,
                "seconds": round(self.seconds, 3),
            },
            **({"generation": self.generation} if self.generation else {}),
            **({"bounds": self.bounds} if self.bounds else {}),
            **({"batch": self.batch} if self.batch else {}),
        }


def fence_id(candidate: str) -> str:
    """The id on the markers around a candidate's text: derived from that text, so the
    candidate cannot write the closing marker (it would have to contain its own hash),
    and stable, so the judge cache still recognises a repeated request."""
    digest = hashlib.sha256(candidate.encode("utf-8", "surrogatepass")).hexdigest()[:20]
    return f"id-{digest}"


# How many JSON objects of a candidate's text are looked for in a judge's echo.
MAX_ECHO_SPANS = 200


def echoed_spans(candidate: str) -> list[str]:
    """Text a judge might echo from the candidate: the whole text and every JSON object in
    it (a candidate that writes ``{"score": 4}`` must not be scored by its own JSON)."""
    spans = [candidate.strip()] if candidate.strip() else []
    decoder = json.JSONDecoder()
    for match in list(re.finditer(r"\{", candidate))[-MAX_ECHO_SPANS:]:
        try:
            _, end = decoder.raw_decode(candidate, match.start())
        except (ValueError, RecursionError):
            continue
        spans.append(candidate[match.start() : end])
    return sorted(set(spans), key=len, reverse=True)


def scrub_echo(reply: str, candidate: str) -> str:
    """The judge's reply without what it echoed of the candidate: fenced blocks carrying the
    candidate's marker id, the candidate's text, JSON objects the candidate wrote."""
    if not candidate:
        return reply
    marker = fence_id(candidate)
    if marker in reply:
        reply = re.sub(
            rf"<[^<>\n]{{0,40}}{marker}[^<>\n]{{0,10}}>.*?(?:</[^<>\n]{{0,40}}{marker}[^<>\n]{{0,10}}>|$)",
            " ",
            reply,
            flags=re.DOTALL,
        )
    for span in echoed_spans(candidate):
        reply = reply.replace(span, " ")
    return reply


def parse_judge_reply(text: str) -> tuple[Verdict | None, str]:
    """A valid score from a judge reply, or None with what was wrong with it.

    Accepts a bare JSON object, one in a code fence, or one embedded in prose. The score
    must be an integer 0-4 (``3``, ``3.0`` or ``"3"``; not ``3.5``, ``"three"`` or ``"²"``).
    """
    candidates = [c for c in json_objects(text) if "score" in c]
    if not candidates:
        return None, "no JSON object with a 'score' field"
    candidate = candidates[-1]
    score = integer_score(candidate["score"])
    if score is None:
        return None, f"score {short_repr(candidate['score'])} is not an integer"
    if not MIN_SCORE <= score <= MAX_SCORE:
        return None, f"score {short_repr(score)} is outside {MIN_SCORE}-{MAX_SCORE}"
    return Verdict(score=score, rationale=rationale_text(candidate.get("rationale"))), ""


def integer_score(value: Any) -> int | None:
    """An integer from a judge's JSON value: ``3``, ``3.0`` or ``"3"``; None for anything
    else (``3.5``, ``"three"``, ``"²"``, ``true``, NaN, a list)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    if isinstance(value, str) and _INTEGER_TEXT.fullmatch(value.strip()):
        return int(value.strip())
    return None


def rationale_text(value: Any, limit: int = 2000) -> str:
    """A judge's rationale as bounded text, whatever JSON value it came as."""
    if value is None:
        return ""
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError, RecursionError):
            text = type(value).__name__
    return text if len(text) <= limit else text[:limit] + "…"


def short_repr(value: Any, limit: int = 80) -> str:
    text = repr(value) if isinstance(value, str) else rationale_text(value, limit)
    return text if len(text) <= limit else text[:limit] + "…"


def judge_messages(
    kind: JudgeKind,
    templates: JudgeTemplates,
    question: str,
    context: str | None,
    candidate: str,
    reference_answer: str | None,
    images: list[str],
) -> list[ChatMessage]:
    """The request for one judge; images only for the vision judges (va, rvf)."""
    text = templates.user(kind).render(
        question=question,
        context_block=context_block(context),
        reference_answer=reference_answer or "",
        candidate_answer=candidate,
        candidate_trace=candidate,
        fence_id=fence_id(candidate),
    )
    return judge_request(templates.system(kind).text, text, [] if kind == "gt" else images)


def judge_request(system: str, text: str, images: list[str]) -> list[ChatMessage]:
    """A judge's system prompt and its user turn: the images (if any) and the text."""
    if not images:
        # A text-only request is plain text: text-only servers' chat templates (llama.cpp's
        # for SmolLM2, for one) fail with a server error on list content.
        return [ChatMessageSystem(content=system.strip()), ChatMessageUser(content=text)]
    content: list[Content] = [ContentImage(image=image) for image in images]
    content.append(ContentText(text=text))
    return [ChatMessageSystem(content=system.strip()), ChatMessageUser(content=content)]


class JudgeFailure(RuntimeError):
    """A judge gave no usable verdict under ``-T judge_failure=error``: raised from the
    scorer, so Inspect records the sample as an error (counted by --fail-on-error, re-run
    by eval-retry) instead of leaving the component unscored."""


SCORE_FORMAT = '{"score": <integer 0-4>, "rationale": "<one or two sentences>"}'
# A judge reply kept in the log is cut to this length (a runaway judge can write megabytes).
MAX_KEPT_REPLY_CHARS = 20_000


async def run_judge(
    kind: str,
    model: Model,
    messages: list[ChatMessage],
    templates: JudgeTemplates,
    settings: JudgeSettings,
    parse: Callable[[str], tuple[Verdict | None, str]] = parse_judge_reply,
    expected: str = SCORE_FORMAT,
    schema: type[BaseModel] = JudgeScore,
    candidate: str = "",
    role: str = "",
) -> JudgeOutcome:
    """Ask the judge (``ask_judge``); a judge that gives no usable verdict leaves the
    outcome unscored with its reason, or, under ``-T judge_failure=error``, raises
    ``JudgeFailure`` so that the sample is an error. Judges asked concurrently call
    ``ask_judge`` and then ``raise_judge_failures`` on all the outcomes, so the error
    names the judge rather than the task group it ran in."""
    outcome = await ask_judge(
        kind, model, messages, templates, settings, parse, expected, schema, candidate, role
    )
    raise_judge_failures(settings, [(role or kind, str(model), outcome)])
    return outcome


def raise_judge_failures(
    settings: JudgeSettings, outcomes: Iterable[tuple[str, str, JudgeOutcome]]
) -> None:
    """Under ``-T judge_failure=error``, raise ``JudgeFailure`` naming every judge
    (``(role, model, outcome)``) that gave no usable verdict; under ``unscored``, nothing."""
    if settings.failure != "error":
        return
    failed = [
        f"{role} ({model}) on {outcome.kind}: {outcome.failure}"
        for role, model, outcome in outcomes
        if outcome.score is None and not outcome.by_rule
    ]
    if failed:
        raise JudgeFailure(
            "a judge failed and -T judge_failure=error makes that a sample error: "
            + "; ".join(failed)
        )


async def ask_judge(
    kind: str,
    model: Model,
    messages: list[ChatMessage],
    templates: JudgeTemplates,
    settings: JudgeSettings,
    parse: Callable[[str], tuple[Verdict | None, str]] = parse_judge_reply,
    expected: str = SCORE_FORMAT,
    schema: type[BaseModel] = JudgeScore,
    candidate: str = "",
    role: str = "",
) -> JudgeOutcome:
    """Ask the judge; on an unusable reply ask again (bounded), then give up unscored.

    A retry appends the bad reply and a correction, so the request differs and the cache
    cannot return the same bad reply again. Each call is bounded by the smaller of the
    judge's own limits and the run's (``judge_bounds``, recorded in the outcome); what the
    judge echoes of ``candidate`` is never read as its verdict.
    """
    outcome = JudgeOutcome(kind=kind, score=None, rationale="")
    conversation = list(messages)
    # The cache key carries the role: two members of a panel on the same model (a
    # self-consistency panel) must not be handed each other's replies.
    cache: bool | CachePolicy = (
        CachePolicy(expiry=None, scopes={"judge_role": role} if role else {})
        if settings.cache
        else False
    )
    outcome.generation = settings.generation(model.config)
    run_config = run_generate_config()
    batch, batch_origin = judge_batch(model.config, run_config)
    batched = bool(batch)
    bounds = judge_bounds(settings, model.config, run_config, batched=batched)
    outcome.bounds = bounds.as_record()
    if batch is not None:
        outcome.batch = batch_record(batch, batch_origin)
    config = settings.generate_config(schema, outcome.generation, bounds, batch)
    for attempt in range(1, settings.retries + 2):
        outcome.attempts = attempt
        started = time.monotonic()
        try:
            with anyio.fail_after(bounds.timeout):
                output = await model.generate(conversation, config=config, cache=cache)
        except TimeoutError:
            outcome.seconds += time.monotonic() - started
            outcome.failure = (
                f"judge call timed out after {bounds.timeout or 0:g} s ({bounds.source['timeout']})"
            )
            return outcome
        except Exception as error:  # a provider error on this request: unscored, reported as such
            if is_setup_error(error):
                raise  # a missing role or provider set-up: the run must stop, not go unscored
            outcome.seconds += time.monotonic() - started
            cause = error.__cause__
            outcome.failure = (
                f"{'judge batch' if batched else 'judge call'} failed: "
                f"{type(error).__name__}: {short_repr(str(error), 300)}"
                + (
                    f" (from {type(cause).__name__}: {short_repr(str(cause), 200)})"
                    if cause
                    else ""
                )
            )
            return outcome
        outcome.seconds += time.monotonic() - started
        if output.usage is not None:
            outcome.input_tokens += output.usage.input_tokens
            outcome.output_tokens += output.usage.output_tokens
        reply = output.completion
        outcome.raw_replies.append(reply[:MAX_KEPT_REPLY_CHARS])
        try:
            parsed, problem = parse(scrub_echo(reply, candidate))
        except Exception as error:  # a parser must never turn a reply into a sample error
            parsed, problem = None, f"unreadable reply ({type(error).__name__})"
        if parsed is not None:
            outcome.score, outcome.rationale, outcome.failure = parsed.score, parsed.rationale, None
            outcome.parts = dict(parsed.parts)
            return outcome
        outcome.failure = f"invalid judge output after {attempt} attempt(s): {problem}"
        conversation = [
            *conversation,
            ChatMessageAssistant(content=reply[:MAX_KEPT_REPLY_CHARS]),
            ChatMessageUser(content=templates.retry.render(problem=problem, expected=expected)),
        ]
        # The unusable reply may itself have come from the cache (a rerun, eval-retry): the
        # corrections are always asked afresh, so a cached bad reply never decides again.
        cache = False
    return outcome


def scored_by_rule(kind: JudgeKind, reason: str) -> JudgeOutcome:
    """A zero the protocol implies (an empty field), given without asking a judge."""
    return JudgeOutcome(kind=kind, score=0, rationale=reason, by_rule=True)


MISSING_ROLE_MESSAGE = (
    "Judges are Inspect model roles and {role!r} was not given. Pass it, e.g. "
    "--model-role {role}=openai/gpt-4o (the open-ended track needs both grader and "
    "vision_grader; in Python: eval(..., model_roles={{'{role}': ...}})). "
    "To judge with the model under test instead, say so explicitly with "
    "-T allow_self_judging=true (or -S allow_self_judging=true with inspect score)."
)


DEFAULT_PANEL_REDUCE = "median"
# A rubric judge's reply budget where its role sets none; a short-answer grader's.
RUBRIC_MAX_TOKENS = JUDGE_DEFAULTS.max_tokens
GRADER_MAX_TOKENS = 256


class JudgeScorerArguments(TypedDict):
    """The judge arguments every judged scorer takes (as ``-S`` too): a task passes them
    with ``**judges.scorer_arguments()``, which mypy checks against the scorer."""

    allow_self_judging: bool
    judge_temperature: float
    judge_seed: int
    judge_max_tokens: int
    judge_retries: int
    judge_structured_output: bool
    judge_cache: bool
    judge_timeout: float
    judge_max_connections: int | None
    judge_failure: str


@dataclass(frozen=True)
class JudgeArguments:
    """A task's judge arguments, checked and converted before anything runs."""

    settings: JudgeSettings
    allow_self_judging: bool
    prompts: str | None = None
    panel_reduce: str = DEFAULT_PANEL_REDUCE

    def scorer_arguments(self) -> JudgeScorerArguments:
        return JudgeScorerArguments(
            allow_self_judging=self.allow_self_judging,
            judge_temperature=self.settings.temperature,
            judge_seed=self.settings.seed,
            judge_max_tokens=self.settings.max_tokens,
            judge_retries=self.settings.retries,
            judge_structured_output=self.settings.structured_output,
            judge_cache=self.settings.cache,
            judge_timeout=self.settings.timeout,
            judge_max_connections=self.settings.max_connections,
            judge_failure=self.settings.failure,
        )


def judge_arguments(
    *,
    allow_self_judging: Any,
    retries: Any,
    structured_output: Any,
    cache: Any,
    timeout: Any,
    max_connections: Any,
    failure: Any = JUDGE_DEFAULTS.failure,
    reply_budget: int = RUBRIC_MAX_TOKENS,
    prompts: str | None = None,
    panel_reduce: Any = DEFAULT_PANEL_REDUCE,
) -> JudgeArguments:
    """A task's judge arguments (its ``judge_*`` parameters, ``-T`` values as YAML scalars
    or strings) checked and converted in one place, so a bad value stops the task before
    any model is called. A judge's generation settings are its role's; what the role leaves
    unset takes the protocol's temperature and seed and ``reply_budget`` (a rubric judge's
    512 tokens, a grader's 256)."""
    settings = JudgeSettings.from_args(
        temperature=JUDGE_DEFAULTS.temperature,
        seed=JUDGE_DEFAULTS.seed,
        max_tokens=reply_budget,
        retries=retries,
        structured_output=structured_output,
        cache=cache,
        timeout=timeout,
        max_connections=max_connections,
        failure=failure,
    )
    return JudgeArguments(
        settings=settings,
        allow_self_judging=coerce_bool(allow_self_judging, "allow_self_judging"),
        prompts=prompts,
        panel_reduce=check_panel_reduce(panel_reduce),
    )


JUDGE_PARAMETERS = (
    SharedParameter(
        "allow_self_judging",
        bool,
        False,
        "Judge with the model under test when a judge role is not given (otherwise a "
        "missing role stops the run).",
    ),
    SharedParameter(
        "judge_retries",
        int,
        JUDGE_DEFAULTS.retries,
        "Extra attempts after an invalid judge reply before it is unscored.",
    ),
    SharedParameter(
        "judge_structured_output",
        bool,
        JUDGE_DEFAULTS.structured_output,
        "Ask judges for a JSON schema (providers that take one).",
    ),
    SharedParameter(
        "judge_cache", bool, JUDGE_DEFAULTS.cache, "Cache judge replies (Inspect's model cache)."
    ),
    SharedParameter(
        "judge_timeout",
        float,
        JUDGE_DEFAULTS.timeout,
        "Seconds one judge call may take before its component is unscored (the run's "
        "--timeout and --attempt-timeout, and the role's own, bound it when smaller).",
    ),
    SharedParameter(
        "judge_max_connections",
        int | None,
        JUDGE_DEFAULTS.max_connections,
        "Concurrent calls per judge model (default: the eval's --max-connections, which "
        "Inspect gives a role over its own).",
    ),
    SharedParameter(
        "judge_failure",
        str,
        JUDGE_DEFAULTS.failure,
        "What a judge that fails does: ``unscored`` (the component is unscored and counted) "
        "or ``error`` (the sample is an error, so --fail-on-error and eval-retry act).",
    ),
)
JUDGE_PROMPTS_PARAMETER = SharedParameter(
    "judge_prompts", str | None, None, "A folder of judge templates replacing the built-in ones."
)
PANEL_REDUCE_PARAMETER = SharedParameter(
    "panel_reduce",
    str,
    DEFAULT_PANEL_REDUCE,
    "How a judge panel's scores become one: median, mean or min.",
)
# The generation settings were -T parameters until they went with the judge's role.
RETIRED_JUDGE_PARAMETERS = {
    f"judge_{setting}": (
        f"give the judge's {setting} with its role, --model-role "
        f"'grader={{model: ..., {setting}: {value}}}'"
    )
    for setting, value in (("temperature", 0), ("seed", 42), ("max_tokens", 512))
}


def judge_parameters(
    *, prompts: bool = False, panel: bool = False, reply_budget: int = RUBRIC_MAX_TOKENS
) -> ParameterGroup[JudgeArguments]:
    """The judge parameters a judged task takes, built into its ``JudgeArguments``: with
    ``prompts`` its rubric templates can be replaced (``judge_prompts``), with ``panel`` its
    panels' reduction chosen (``panel_reduce``); ``reply_budget``: the judge's max_tokens
    where its role sets none."""
    parameters: tuple[SharedParameter, ...] = JUDGE_PARAMETERS
    if prompts:
        parameters += (JUDGE_PROMPTS_PARAMETER,)
    if panel:
        parameters += (PANEL_REDUCE_PARAMETER,)

    def build(values: dict[str, Any]) -> JudgeArguments:
        return judge_arguments(
            allow_self_judging=values["allow_self_judging"],
            retries=values["judge_retries"],
            structured_output=values["judge_structured_output"],
            cache=values["judge_cache"],
            timeout=values["judge_timeout"],
            max_connections=values["judge_max_connections"],
            failure=values["judge_failure"],
            reply_budget=reply_budget,
            prompts=values.get("judge_prompts"),
            panel_reduce=values.get("panel_reduce", DEFAULT_PANEL_REDUCE),
        )

    return ParameterGroup(parameters, build, RETIRED_JUDGE_PARAMETERS)


# The judge parameters of a task whose judge grades a short answer (VQA, GEMeX, CMB): the
# same parameters, a short reply budget.
GRADER_JUDGE_PARAMETERS = judge_parameters(reply_budget=GRADER_MAX_TOKENS)


class LineageWatch:
    """Warns, once per scorer (so once per run) and judge, when a judge is the model under
    test or of its family (``core.lineage``): on the console and, as a logger event, in the
    transcript of the sample it was found in; ``note`` gives what a score records."""

    def __init__(self) -> None:
        self._found: dict[tuple[str, str], str | None] = {}

    def check(self, role: str, judge: Model) -> str | None:
        key = (role, str(judge))
        if key not in self._found:
            found = judge_lineage(role, str(judge), str(get_model()))
            self._found[key] = None if found is None else f"{role} {judge} {found.relation}"
            if found is not None:
                logger.warning(found.message())
        return self._found[key]


def judge_model(role: str, allow_self_judging: bool, lineage: LineageWatch | None = None) -> Model:
    """The one model bound to a judge role; refuse to fall back silently to the model under
    test, and refuse a role bound to several models where one judge is asked (Inspect would
    use the first and say nothing). With ``lineage``, a judge of the tested model's lineage
    is warned of (a scorer of the model's replies passes one; judge_meta, which tests the
    judges themselves, does not)."""
    bound = model_roles().get(role)
    if isinstance(bound, list) and len(bound) > 1:
        raise UserInputError(SINGLE_JUDGE_MESSAGE.format(role=role, count=len(bound)))
    if allow_self_judging:
        model = get_model(role=role)  # falls back to the model under test, as asked
    elif bound is None:
        raise UserInputError(MISSING_ROLE_MESSAGE.format(role=role))
    else:
        model = get_model(role=role, required=True)
    if lineage is not None:
        lineage.check(role, model)
    return model


def member_role(base: str, index: int) -> str:
    """The role name of a panel's ``index``-th member (from 0) of a role bound to several
    models: ``grader``, ``grader_2``, ... as numbered roles are named."""
    return base if index == 0 else f"{base}_{index + 1}"


def bound_role_models(roles: dict[str, Any]) -> dict[str, str]:
    """Role name -> model name, as a log's ``model_roles`` binds them, a role bound to
    several models giving each member its panel name (``member_role``)."""
    found: dict[str, str] = {}
    for role, config in roles.items():
        configs = config if isinstance(config, list) else [config]
        for index, member in enumerate(configs):
            found[member_role(role, index)] = str(getattr(member, "model", member))
    return found


def panel_judges(
    base: str, allow_self_judging: bool, lineage: LineageWatch | None = None
) -> list[tuple[str, Model]]:
    """The judges of a role's panel, each with the role name its records carry. A role bound
    to several models (``--model-role grader=a,b``, Inspect's own syntax) is a panel whose
    members are named as numbered roles would be (``grader``, ``grader_2``, ...); so is a
    role with numbered extras (``--model-role grader_2=...``). Both at once is refused."""
    bound = model_roles()
    members = bound.get(base)
    if isinstance(members, list) and len(members) > 1:
        numbered = [role for role in panel_roles(base, bound) if role != base]
        if numbered:
            raise UserInputError(
                MIXED_PANEL_MESSAGE.format(role=base, numbered=", ".join(numbered))
            )
        panel = [(member_role(base, n), model) for n, model in enumerate(members)]
        if lineage is not None:
            for role, model in panel:
                lineage.check(role, model)
        return panel
    roles = panel_roles(base, [] if allow_self_judging else bound)
    return [(role, judge_model(role, allow_self_judging, lineage)) for role in roles]


SINGLE_JUDGE_MESSAGE = (
    "--model-role {role} is bound to {count} models, and this task asks one {role} judge: "
    "Inspect would quietly use the first. Bind one model to {role} (judge panels are for "
    "the open-ended track's roles)."
)
MIXED_PANEL_MESSAGE = (
    "--model-role {role} is bound to several models and {numbered} is given too: give the "
    "panel one way, either {role}=a,b,c or {role}=a with {role}_2=b, {role}_3=c."
)


def refuse_bad_bindings(roles: Iterable[str], bindings: dict[str, int], panels: bool) -> None:
    """Refuse, in one line, a judge role bound to several models where the task asks one
    judge of it (Inspect would use the first and say nothing), or a panel given both as a
    list and as numbered roles. ``bindings``: role -> how many models it is bound to."""
    for role in dict.fromkeys(roles):
        count = bindings.get(role, 1)
        if count > 1 and not panels:
            raise UserInputError(SINGLE_JUDGE_MESSAGE.format(role=role, count=count))
        numbered = [name for name in panel_roles(role, bindings) if name != role]
        if count > 1 and numbered:
            raise UserInputError(
                MIXED_PANEL_MESSAGE.format(role=role, numbered=", ".join(numbered))
            )


def bound_role_counts() -> dict[str, int]:
    """How many models each role of the running eval is bound to (Inspect binds a role to
    a list with ``--model-role grader=a,b`` or ``model_roles={"grader": [a, b]}``)."""
    return {
        role: len(bound) if isinstance(bound, list) else 1 for role, bound in model_roles().items()
    }


CORRECT_FORMAT = '{"correct": <true or false>, "rationale": "<one sentence>"}'


class CorrectnessVerdict(BaseModel):
    """Whether a candidate answer means the same as the reference."""

    correct: bool = Field(description="True when the candidate matches the reference")
    rationale: str = Field(description="One sentence")


def parse_correctness(text: str) -> tuple[Verdict | None, str]:
    candidates = [c for c in json_objects(text) if "correct" in c]
    if not candidates:
        return None, "no JSON object with a 'correct' field"
    value = candidates[-1]["correct"]
    if isinstance(value, str) and value.strip().lower() in {"true", "false"}:
        value = value.strip().lower() == "true"
    if not isinstance(value, bool):
        return None, f"'correct' is {short_repr(value)}, not true or false"
    return Verdict(int(value), rationale_text(candidates[-1].get("rationale"))), ""


@functools.cache
def grader_templates(prefix: str, family: str = SHARED) -> JudgeTemplates:
    """A grader's system/user templates (from its family's prompts) plus the shared retry
    template (read once, not once per graded answer)."""
    return JudgeTemplates(
        {
            **{
                name: load_template(name, family=family)
                for name in (f"{prefix}_system", f"{prefix}_user")
            },
            "judge_retry": load_template("judge_retry"),
        }
    )


@dataclass(frozen=True)
class GraderKind:
    """A text grader that rates a candidate answer against a reference: its kind, the
    family prompts ``{prefix}_system``/``{prefix}_user``, and how its verdict is read."""

    kind: str
    prefix: str
    parse: Callable[[str], tuple[Verdict | None, str]]
    expected: str
    schema: type[BaseModel]
    family: str = SHARED


async def grade_answer(
    grader: GraderKind,
    question: str,
    reference: str,
    candidate: str,
    settings: JudgeSettings,
    allow_self_judging: bool,
    lineage: LineageWatch | None = None,
) -> JudgeOutcome:
    """Ask the ``grader`` role for ``grader``'s verdict on a candidate answer."""
    templates = grader_templates(grader.prefix, family=grader.family)
    text = templates.templates[f"{grader.prefix}_user"].render(
        question=question,
        reference_answer=reference,
        candidate_answer=candidate,
        fence_id=fence_id(candidate),
    )
    messages = judge_request(templates.templates[f"{grader.prefix}_system"].text, text, [])
    return await run_judge(
        grader.kind,
        judge_model("grader", allow_self_judging, lineage),
        messages,
        templates,
        settings,
        parse=grader.parse,
        expected=grader.expected,
        schema=grader.schema,
        candidate=candidate,
    )


CORRECTNESS = GraderKind(
    "correct", "grader_correct", parse_correctness, CORRECT_FORMAT, CorrectnessVerdict
)


async def grade_correctness(
    question: str,
    reference: str,
    candidate: str,
    settings: JudgeSettings,
    allow_self_judging: bool,
    lineage: LineageWatch | None = None,
) -> JudgeOutcome:
    """Ask the ``grader`` role whether a free-text answer matches the reference."""
    return await grade_answer(
        CORRECTNESS, question, reference, candidate, settings, allow_self_judging, lineage
    )


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


# --- judge panels -----------------------------------------------------------------------

PANEL_REDUCTIONS = ("median", "mean", "min")


def check_panel_reduce(value: Any) -> str:
    """``value`` if it names a panel reduction, else a refusal naming the choices."""
    if value not in PANEL_REDUCTIONS:
        raise TaskArgumentError(
            f"panel_reduce={value!r}: choose one of {', '.join(PANEL_REDUCTIONS)} "
            "(-T for a task, -S for inspect score)"
        )
    return str(value)


def panel_roles(base: str, bound: Iterable[str]) -> list[str]:
    """The judges of ``base``'s panel: ``base`` and every bound role ``base_<n>`` (n a whole
    number), in order of n."""
    suffixed = sorted(
        (int(match.group(1)), role)
        for role in bound
        if (match := re.fullmatch(rf"{re.escape(base)}_(\d+)", role))
    )
    return [base, *(role for _, role in suffixed)]


def reduce_panel(scores: Sequence[float], how: str) -> float | None:
    """One component score from a panel's scores: the median (the lower middle value of an
    even panel, so a tie never raises a score), the mean or the minimum; None when no judge
    of the panel scored."""
    if not scores:
        return None
    ordered = sorted(scores)
    if how == "median":
        return float(ordered[(len(ordered) - 1) // 2])
    if how == "min":
        return float(ordered[0])
    return sum(ordered) / len(ordered)


def panel_component(kind: str, members: list[tuple[str, JudgeOutcome]], how: str) -> float:
    """The component's value from its panel (NaN when every judge failed). RVF_trace is made
    an integer (rounded down) before the gate, whatever the reduction: the official gate caps
    only RVF <= 1 and RVF == 2, and a fractional 1.5 would slip past it."""
    value = reduce_panel([o.score for _, o in members if o.score is not None], how)
    if value is None:
        return math.nan
    return float(math.floor(value)) if kind == "rvf" else value


def panel_metadata(
    members: list[tuple[str, JudgeOutcome]], value: float, how: str
) -> dict[str, object]:
    """What the log keeps of a component, each judge's result once. One judge (or a rule):
    that judge's own record with its role. A panel: the reduced score, how it was reduced,
    how many judges failed, and every judge's own record under ``panel``."""
    if len(members) == 1:
        role, outcome = members[0]
        return {"role": role, **outcome.as_metadata()}
    scored = [o for _, o in members if o.score is not None]
    failures = [f"{role}: {o.failure}" for role, o in members if o.score is None and o.failure]
    return {
        "score": None if math.isnan(value) else value,
        "failure": None if scored else "; ".join(failures),
        "panel_reduce": how,
        "panel_failed": len(members) - len(scored),
        "panel": [{"role": role, **outcome.as_metadata()} for role, outcome in members],
    }


def panel_members(record: dict[str, Any]) -> list[dict[str, Any]]:
    """Each judge's record of a logged component: the panel's members, or the one judge's
    record itself (earlier versions also kept a one-judge panel under ``panel``)."""
    panel = record.get("panel")
    if isinstance(panel, list):
        return [member for member in panel if isinstance(member, dict)]
    return [{"role": "judge", **record}]
