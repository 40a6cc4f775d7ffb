# Sphinx configuration for eagerflow's documentation (`make docs` builds it into
# build/docs/html with warnings as errors).
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
with open(os.path.join(ROOT, "VERSION")) as f:
    release = version = f.read().strip()

project = "eagerflow"
author = "the eagerflow developers"
extensions = ["myst_parser", "sphinx.ext.autodoc"]
source_suffix = {".md": "markdown"}
master_doc = "index"
exclude_patterns = ["_build"]
myst_heading_anchors = 3
autodoc_default_options = {"members": True, "undoc-members": True}
autodoc_member_order = "groupwise"
html_theme = "alabaster"
html_title = f"eagerflow {release}"
# Links from the guides to source files (../src/...) are not documents; their targets
# are checked by scripts/check_doc_links.py instead.
suppress_warnings = ["myst.xref_missing"]
# The Python package comes from the build tree (PYTHONPATH=build/python).
sys.path.insert(0, os.environ.get("EF_PYTHON_PATH", os.path.join(ROOT, "build", "python")))


def _as_preformatted(app, what, name, obj, options, lines):
    """Docstrings are written as plain text (TensorFlow's layout: a summary, then Args,
    Returns, an example), not reStructuredText: show them as written."""
    if lines:
        lines[:] = ["::", ""] + ["   " + line for line in lines] + [""]


from docutils import nodes  # noqa: E402
from docutils.statemachine import StringList  # noqa: E402
from sphinx.util.docutils import SphinxDirective  # noqa: E402


class PublicHeaders(SphinxDirective):
    """``.. public-headers:: core`` shows every header of include/eagerflow/core, each
    under its own title, so that a new header appears without editing the page."""

    required_arguments = 1

    def run(self):
        folder = os.path.join(ROOT, "include", "eagerflow", self.arguments[0])
        if not os.path.isdir(folder):
            raise self.error(f"public-headers: no folder {folder}")
        rst = []
        for name in sorted(os.listdir(folder)):
            if not name.endswith(".h"):
                continue
            path = os.path.join(folder, name)
            self.env.note_dependency(path)
            include = f"eagerflow/{self.arguments[0]}/{name}"
            # A leading "/" is the documentation's root (docs/).
            rst += [include, "~" * len(include), "", f".. literalinclude:: /../include/{include}", "   :language: cpp",
                    ""]
        container = nodes.section()
        container.document = self.state.document
        self.state.nested_parse(StringList(rst), self.content_offset, container, match_titles=True)
        return container.children


def setup(app):
    app.connect("autodoc-process-docstring", _as_preformatted)
    app.add_directive("public-headers", PublicHeaders)
