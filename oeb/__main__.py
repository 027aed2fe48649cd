import sys

from oeb.cli import main

sys.exit(main())
