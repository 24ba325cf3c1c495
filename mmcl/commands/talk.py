"""The command line ``mmcl talk --out DIR [--size tiny|default|full] [--style talk]``: a talk's
slides from the book's figures.

Writes ``DIR/mmcl-talk.pdf`` (:func:`mmcl.figures.deck.write_deck`): a 16:9 title page (the
paper's title, authors and venue from ``CITATION.cff``), the model's diagram, then each chapter's
takeaway figure in the book's order, titled by its claim, a citation line at the foot of each page.
The output folder is checked before anything is drawn."""
from __future__ import annotations

import sys
import time

__all__ = ["add_parser", "run"]


def add_parser(sub) -> None:
    """Register ``mmcl talk`` on the subparsers ``sub`` of ``mmcl.cli.build_parser``."""
    p = sub.add_parser("talk", help="a 16:9 deck of the book's takeaway figures (DIR/mmcl-talk.pdf)",
                       description="Write DIR/mmcl-talk.pdf: a title page, the model's diagram and every "
                                   "chapter's takeaway figure in the book's order, one a page, each titled by "
                                   "its claim, with a citation line at the foot.")
    p.add_argument("--out", required=True, help="output folder (created if missing)")
    p.add_argument("--size", default="default", choices=("tiny", "default", "full"),
                   help="default: what the book shows on a CPU; full: MMCL_BOOK_FULL=1's sizes; tiny: seconds")
    p.add_argument("--style", default="talk", choices=("talk",),
                   help="talk (the only one): 16:9 with slide-sized type")
    p.add_argument("--device", default="cpu", help="cpu (default), cuda or cuda:K")
    p.set_defaults(func=run)


def run(args) -> int:
    """``mmcl talk``: check the output folder, draw every page, write the deck, print its path."""
    from mmcl._utils import writable_dir

    out = writable_dir("--out", args.out)  # before drawing (a figure may train), not after
    import matplotlib

    matplotlib.use("Agg")
    from mmcl.figures.deck import write_deck

    t0 = time.perf_counter()
    path = write_deck(out, size=args.size, device=args.device,
                      progress=(lambda name: print(f"drawing {name}", file=sys.stderr)) if sys.stderr.isatty() else None)
    print(f"wrote {path}")
    print(f"done in {time.perf_counter() - t0:.1f} s")
    return 0
