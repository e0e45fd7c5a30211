from killmap.cli import main

raise SystemExit(main())
