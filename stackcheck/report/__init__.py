"""Reports: one curriculum report drawn as JSON, Markdown and the terminal (render), as an HTML page
and a class matrix (html), with its plots (plots), and several reports merged into one (merge)."""
