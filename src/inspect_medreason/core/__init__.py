"""What the evaluation families share at eval time. The families import from here; nothing
here imports a family or the ``medreason`` command (``inspect_medreason.cli``).

- Reading data: ``loaders`` (MedReason case files), ``hub`` (the public benchmarks as
  published: splits, pinned revisions, image cells), ``splits``, ``archives``, ``schema``
  (the case contract), ``images`` and ``dicom`` (image files), ``lazy_dataset``.
- Prompting: ``prompts`` (templates in files), ``solvers``.
- Reading replies: ``extraction`` (option labels), ``short_answers`` (yes/no and short
  answers), ``official_template`` (what the challenge's containers would have read).
- Judging and scoring: ``judges`` (model roles, panels, the VA_final gate), ``metrics``,
  ``intervals``.
- Plumbing: ``errors`` (the user's mistakes as messages), ``params`` (``-T`` coercion),
  ``files`` (atomic writes, content hashes), ``offline_model``.
"""
