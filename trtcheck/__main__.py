from trtcheck.cli import main

raise SystemExit(main())
