"""``medreason rate``: its arguments, what it prints, the page it writes and, with
``--serve``, the round it serves until Ctrl-C. The page and the server are the rating
package's (``inspect_medreason.rating``: ``build_rating_page``, ``open_rating_server``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from inspect_medreason.analysis.errors import AnalysisError
from inspect_medreason.cli.command_line import (
    EXIT_OK,
    TOGETHER,
    Subcommands,
    non_negative_int,
    positive_int,
    print_notes,
)
from inspect_medreason.core.files import OutputSet
from inspect_medreason.rating.page import RatingPage, build_rating_page
from inspect_medreason.rating.server import (
    ServeOptions,
    check_serve_options,
    open_rating_server,
    serving_warnings,
)


def add_parsers(commands: Subcommands) -> None:
    """``rate``: its arguments and the function that runs it."""
    rate = commands.add_parser(
        "rate",
        help="write a rating page: clinicians score a blinded sample of judged cases",
        description="Write one self-contained HTML page (works offline, from a file) showing "
        "a stratified sample of judged open-ended cases one at a time (images, question, "
        "reference, the model's answer and reasoning trace, the rubric's 0-4 anchors), blinded "
        "to the judges' scores and the model. Raters save their ratings as a JSON file; "
        "with --serve the page is served to a team and every rating goes to a SQLite store "
        "as it is given. 'agreement --ratings' and 'calibrate' read either with the same logs.",
    )
    rate.add_argument("logs", nargs="+", metavar="LOG_OR_DIR", help="judged open-ended logs")
    rate.add_argument("--output", help="the .html page to write" + TOGETHER)
    rate.add_argument(
        "--serve",
        action="store_true",
        help="serve the page to a team (until Ctrl-C), writing every rating to --store as it "
        "is given; restart with the same logs, --cases, --seed and --store to go on",
    )
    rate.add_argument("--store", help="the SQLite file of a served round's ratings")
    rate.add_argument(
        "--host", default="127.0.0.1", help="the address to serve on (127.0.0.1: this machine)"
    )
    rate.add_argument("--port", type=int, default=8765, help="the port to serve on (8765)")
    rate.add_argument(
        "--allow-host",
        action="append",
        metavar="NAME",
        help="a name raters reach the server by (its DNS name, a proxy's, NAME:PORT for one "
        "port only); requests naming any other host are refused (repeatable)",
    )
    rate.add_argument(
        "--raters",
        metavar="NAME,NAME|@FILE",
        help="one link per rater, whose token rates under that name only (else one link "
        "for all, and raters type their names); @FILE reads the names from a file, one a line",
    )
    rate.add_argument("--cases", type=positive_int, default=60, help="cases on the page (60)")
    rate.add_argument(
        "--seed", type=int, default=0, help="the sample's seed: same seed, same page (0)"
    )
    rate.add_argument(
        "--data",
        help="the data folder to read images from when a log holds none (a blind-control run, "
        "--no-log-images); default: the folder the run recorded",
    )
    rate.add_argument(
        "--max-image-px",
        type=non_negative_int,
        default=1024,
        metavar="PX",
        help="scale images larger than PX pixels on their long side down to it for the page "
        "(the logs keep the originals; the page's key says so); 0: as logged (1024)",
    )
    rate.add_argument("--force", action="store_true", help="overwrite the output file")
    rate.set_defaults(handler=cmd_rate)


def cmd_rate(args: argparse.Namespace) -> int:
    if not args.serve and not args.output:
        raise AnalysisError(["give --output PAGE.html (a page to send), or --serve"])
    if args.serve and not args.store:
        raise AnalysisError(["--serve writes every rating to a SQLite file: give --store FILE"])
    served_only = [f"--{n.replace('_', '-')}" for n in ("raters", "allow_host") if getattr(args, n)]
    if served_only and not args.serve:
        raise AnalysisError([f"{' and '.join(served_only)}: only with --serve (a served round)"])
    # the served options are checked before the page is built: a mistyped name is said at
    # once, not after the images are read
    options = check_serve_options(args.raters, args.allow_host) if args.serve else None
    outputs = OutputSet(args.force, [*args.logs, args.data])
    output = outputs.add(args.output) if args.output else None
    page = build_rating_page(
        args.logs, args.cases, args.seed, args.data or None, args.max_image_px or None
    )
    for note in page.notes:
        print(f"note: {note}", file=sys.stderr)
    for warning in page.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if output is not None:
        print_notes(outputs.write({output: page.html}))
        print(
            f"wrote {output} (page {page.page_id}: {page.cases} cases, "
            f"{len(page.html.encode('utf-8')) / 1e6:.1f} MB)"
        )
    for stratum, count in page.strata.items():
        print(f"  {count:4d}  {stratum}")
    if options is not None:
        serve(page, args, options)
    return EXIT_OK


def serve(page: RatingPage, args: argparse.Namespace, options: ServeOptions) -> None:
    """Serve the page until interrupted, saying where the ratings go and the links to send."""
    for warning in serving_warnings(args.host, args.port, options.allowed_hosts):
        print(f"warning: {warning}", file=sys.stderr)
    server = open_rating_server(
        page,
        args.store,
        args.data or None,
        args.host,
        args.port,
        options.raters,
        options.allowed_hosts,
    )
    print(f"serving page {page.page_id} ({page.cases} cases); ratings go to {Path(args.store)}")
    links = server.links()
    if None in links:
        print(f"send each rater this link: {links[None]}", flush=True)
    else:
        print("send each rater their own link (it rates under their name only):")
        for name, link in links.items():
            print(f"  {name}: {link}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("stopped; every rating given is in the store", file=sys.stderr)
    finally:
        server.server_close()
