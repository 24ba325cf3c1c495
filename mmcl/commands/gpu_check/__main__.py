"""The child process of the chapters step: ``python -m mmcl.commands.gpu_check _chapter CHAPTER.md RESULT.json``."""
import sys

from mmcl.commands.gpu_check.chapters import chapter_child

if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] != "_chapter":
        sys.exit("usage: python -m mmcl.commands.gpu_check _chapter CHAPTER.md RESULT.json")
    sys.exit(chapter_child(sys.argv[2], sys.argv[3]))
