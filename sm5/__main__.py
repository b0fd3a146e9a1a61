from sm5.cli import main

raise SystemExit(main())
