from killmap.cli import entry

entry()
