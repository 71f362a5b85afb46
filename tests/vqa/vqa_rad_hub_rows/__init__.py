"""Fixture data, not tests: three real VQA-RAD test questions and their two images (CC0), in
the hub's form (rows.json), for test_release_split.py. A package only so that
inspect-evals-lint's tests_init check, which wants every test folder to be one, passes."""
