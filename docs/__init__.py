"""The documentation, shipped in the wheel as ``bothost.docs`` (setup.py maps this folder).

``bothost docs [TOPIC]`` prints these files, so a user who installed the wheel, and has no
checkout, reads the same pages the error messages and the offline agent point at.
"""
