"""What the evaluation families share at eval time. The families import from here; nothing
here imports a family or the ``medreason`` command (``inspect_medreason.cli``).

- Reading data: ``loaders`` (MedReason case files), ``hub`` (the public benchmarks as
  published: splits, pinned revisions, image cells), ``splits``, ``archives``, ``schema``
  (the case contract), ``images`` and ``dicom`` (image files), ``lazy_dataset``,
  ``user_files`` (bounded reads of the files a user names), ``eval_metadata`` (each
  family's ``eval.yaml``: task versions).
- Prompting: ``prompts`` (templates in files), ``solvers``.
- Reading replies: ``extraction`` (option labels), ``extractor`` (the ``extractor`` role,
  for what the rules leave unread), ``short_answers`` (yes/no and short answers),
  ``official_template`` (what the challenge's containers would have read),
  ``unread_warning`` (the unread count by form, and the warning when too many go unread).
- Judging and scoring: ``judges`` (model roles, panels, judge calls), ``gate`` (the
  official VA_final gate), ``lineage`` (a judge of the tested model's family), ``metrics``,
  ``intervals``.
- Image-quality shifts: ``shift`` (the degradations, their catalog and how a task applies
  them), ``image_quality`` (no-reference blur and noise measures).
- Plumbing: ``errors`` (the user's mistakes as messages), ``params`` (``-T`` coercion),
  ``files`` (atomic writes, content hashes), ``strict_json`` (JSON every reader accepts),
  ``image_confinement`` (where a command may read a case's images), ``log_paths`` (how a
  local path is named in a log: relative, with digests), ``rescored_images`` (re-scoring
  writes no image a log did not hold), ``offline_model`` (the
  built-in ``medreason/...`` stand-in models), ``reference_judge`` (the offline judge
  ``medreason/reference-judge``, whose verdicts follow what it measures).
"""
