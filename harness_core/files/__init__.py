"""Files Harness reads and writes for itself: `private` (created 0600, directories 0700), `scratch` (temporary
directories a killed Harness leaves are swept), `inputs` (a file the user names, read with caps).

Standard library only (and the `InvalidSpecError` model); imports nothing here.
"""
