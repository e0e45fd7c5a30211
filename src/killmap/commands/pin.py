"""`killmap pin`: pin mutations to the current text of their targets, in their catalog files."""

from __future__ import annotations

import argparse

from killmap.commands.shared import EXIT_HELD, add_catalog_option, catalog_options, project_root, refuse_unknown_names


def add_parser(sub) -> None:
    pin = sub.add_parser("pin", help="pin mutations to the current text of their targets")
    pin.add_argument("names", nargs="*", metavar="NAME")
    add_catalog_option(pin)
    pin.set_defaults(main=main)


def main(args: argparse.Namespace) -> int:
    root = project_root()
    from killmap.catalog.plan import load
    from killmap.mutate.mutants import build_mutant
    from killmap.mutate.pins import pins_for, rewrite_pins

    catalogs, mutations = load(root, catalog_options(args))
    refuse_unknown_names(args.names, catalogs, mutations)
    chosen = [m for m in mutations if not args.names or m.name in args.names]
    by_catalog: dict[str, dict[str, dict[str, str]]] = {}
    for mutation in chosen:
        by_catalog.setdefault(mutation.catalog, {})[mutation.name] = pins_for(
            root, mutation, build_mutant(root, mutation)
        )
    for catalog, updates in by_catalog.items():
        path = root / catalog
        text = path.read_text(encoding="utf-8")
        new = rewrite_pins(text, updates, catalog)
        if new != text:
            path.write_text(new, encoding="utf-8")
        print(f"{catalog}: pinned {', '.join(updates)}")
    return EXIT_HELD
