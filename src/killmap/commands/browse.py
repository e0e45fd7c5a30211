"""`killmap list` and `killmap show`: what the catalogs hold, and one mutant as a diff. Nothing runs."""

from __future__ import annotations

import argparse
import sys

from killmap.commands.shared import (
    EXIT_FAILED,
    EXIT_HELD,
    add_catalog_option,
    catalog_options,
    project_root,
    refuse_unknown_names,
)


def add_parser(sub) -> None:
    listing = sub.add_parser("list", help="list the mutations")
    listing.add_argument("names", nargs="*", metavar="NAME")
    add_catalog_option(listing)
    listing.set_defaults(main=list_main)
    show = sub.add_parser("show", help="show a mutant as a diff")
    show.add_argument("names", nargs=1, metavar="NAME")
    add_catalog_option(show)
    show.set_defaults(main=show_main)


def list_main(args: argparse.Namespace) -> int:
    root = project_root()
    from killmap.catalog.plan import load

    catalogs, mutations = load(root, catalog_options(args))
    refuse_unknown_names(args.names, catalogs, mutations)
    for m in mutations:
        if args.names and m.name not in args.names:
            continue
        contract = f"invariant (control: {m.control})" if m.invariant else f"kills {len(m.kills)}"
        print(f"{m.name:40} {m.op:16} {str(m.target):60} {contract}")
    return EXIT_HELD


def show_main(args: argparse.Namespace) -> int:
    root = project_root()
    from killmap.catalog.plan import load
    from killmap.verdict.prepare import mutant_to_show

    catalogs, mutations = load(root, catalog_options(args))
    refuse_unknown_names(args.names[:1], catalogs, mutations)
    [found] = [m for m in mutations if m.name == args.names[0]]
    mutant = mutant_to_show(root, found)
    if not mutant.applied:
        print(f"not applied: {mutant.reason}")
        return EXIT_FAILED
    sys.stdout.write(mutant.diff)
    return EXIT_HELD
