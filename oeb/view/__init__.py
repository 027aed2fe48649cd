"""`oeb view`: a read-only web app over graded runs (docs/diagnosing.md).

`api` draws every answer from the run folders and the dataset, `pdf` reads a document's text layer and
renders its pages, `app` serves them (werkzeug) and `export` writes the same app as static files.
"""
