"""Which CRC32 RocksDB computes with: it writes 'Fast CRC32 supported: ...' into its LOG at open."""
import re
from pathlib import Path


def crc32_from_log(db_path) -> str | None:
    log = Path(db_path) / "LOG"
    try:
        m = re.search(r"Fast CRC32 supported: (.*)", log.read_text(errors="replace"))
    except OSError:
        return None
    return m.group(1).strip() if m else None
