"""Publishing graded runs where the data lives, and reproducing a published row (docs/publishing.md).

`publish` puts run folders, their leaderboard card and results.json on a Hub dataset (one commit) or
any writable storage URL, after checking every file for secrets and local paths; `reproduce` runs a
published row again on the same documents and tests the paired difference. Both read and write run
folders through `oeb.storage` and compute their numbers with `oeb.report`.
"""

from oeb.publish.publish import Published, publish
from oeb.publish.reproduce import Reproduction, reproduce

__all__ = ["Published", "Reproduction", "publish", "reproduce"]
