from domestique.cli import main

raise SystemExit(main())
