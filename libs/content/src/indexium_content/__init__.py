"""Untrusted content: one door each way (conventions.md, point 14).

Everything a mod author, a manifest or a GitHub payload says reaches a visitor's browser or
a launcher through this package, and only through it:

* :mod:`indexium_content.urls`: the one URL policy. Every URL we store, serve or render
  (homepage, sources, issues, wiki, discord, donation, icon, avatar, file links, and the
  links a Markdown renderer finds in release notes or a README) passes :func:`urls.check`.
* :mod:`indexium_content.markdown`: READMEs and release notes as sanitized HTML (markdown-it-py
  with GitHub's flavour, then nh3 against an allow-list, every link and image through
  :mod:`~indexium_content.urls`), their plain text for search, and raw Markdown with the
  link destinations the policy refuses neutralised for the JSON APIs.
* :mod:`indexium_content.categories`: GitHub topics onto the one category vocabulary that
  ``/v2/tag/category`` serves; every other topic stays a plain tag (bounded, no markup).

Pure functions over strings: no I/O, no logging (the callers log what was dropped, once,
where they write it). An import-linter contract in the root pyproject.toml holds that.
"""
