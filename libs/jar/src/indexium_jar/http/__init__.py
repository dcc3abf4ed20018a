"""The I/O side of the jar reader: HTTP range requests, redirects and the download
policy (which resolves host names). Everything that parses lives in the pure packages."""
