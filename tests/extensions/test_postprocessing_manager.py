"""``PostProcessingManager``: a file that writes through a chain of post-processing
plugins (classes or dotted paths, first to last) into the target file."""

from __future__ import annotations

import gzip
import lzma
from io import BytesIO

from skitter.extensions.postprocessing import GzipPlugin, PostProcessingManager


class _Keep(BytesIO):
    """A target that keeps its bytes when the chain closes it."""

    def close(self) -> None:
        self.kept = self.getvalue()
        super().close()


def test_the_chain_applies_first_to_last_and_tell_is_the_target_position() -> None:
    target = _Keep()
    chain = PostProcessingManager(
        [GzipPlugin, "skitter.extensions.postprocessing.LZMAPlugin"], target, {}
    )
    assert chain.writable()
    assert chain.write(b"data" * 100) == 400
    assert chain.tell() == target.tell()  # what was written to the target (headers)
    chain.close()
    assert chain.closed and target.closed
    assert gzip.decompress(lzma.decompress(target.kept)) == b"data" * 100
