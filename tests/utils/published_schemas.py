"""Small local files in each public dataset's own published schema, for the family tests
and the README commands (nothing is downloaded)."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path
from typing import Any

import datasets
import numpy as np
from conftest import write_json, write_jsonl, write_png
from PIL import Image

VQA_RAD_ROWS = [
    ("is there a fracture?", "yes", "ANSWER: Yes."),
    ("is the heart enlarged?", "no", "Looking closely, I think so.\nANSWER: yes"),
    ("what organ is shown?", "liver", "ANSWER: Liver"),
    ("what modality is used?", "ct", "ANSWER: computed tomography"),
    ("where is the lesion?", "right lobe", "Hard to say.\nI cannot tell from this image."),
]


def vqa_rad_parquet(folder: Path, textured: bool = False) -> Path:
    """The HF layout: parquet with an Image feature (bytes inside); uniform greys, or
    ``textured`` ones (random pixels, which an image shift always changes)."""
    images = [Image.new("L", (8, 8), 30 * i) for i in range(len(VQA_RAD_ROWS))]
    if textured:
        generator = np.random.default_rng(0)
        images = [
            Image.fromarray((generator.random((16, 16)) * 200 + 20).astype(np.uint8), mode="L")
            for _ in VQA_RAD_ROWS
        ]
    dataset = datasets.Dataset.from_dict(
        {
            "image": images,
            "question": [q for q, _, _ in VQA_RAD_ROWS],
            "answer": [a for _, a, _ in VQA_RAD_ROWS],
        }
    ).cast_column("image", datasets.Image())
    folder.mkdir(parents=True, exist_ok=True)
    dataset.to_parquet(str(folder / "test-00000-of-00001.parquet"))
    return folder


def gemex_folder(root: Path) -> Path:
    """The hub's layout: one JSONL file per question type at the root, named without a
    split; MIMIC-CXR-style image paths under ``files/``."""
    write_png(root / "files" / "p10" / "s1" / "img.jpg", size=(16, 16))
    common = {
        "image_path": "files/p10/s1/img.jpg",
        "visual_regions": ["left lung"],
        "visual_locations": [[10, 20, 60, 120]],
        "ori_report": "...",
        "type": "abnormality",
    }
    write_jsonl(
        root / "closed_ended_question.jsonl",
        [
            {
                **common,
                "q_id": 1,
                "row_id": 1,
                "question": "Is there an effusion? (c1)",
                "answer": "Yes.",
                "reason": "Blunted angle.",
                "choices": [],
            }
        ],
    )
    write_jsonl(
        root / "single_choice_question.jsonl",
        [
            {
                **common,
                "q_id": 2,
                "row_id": 2,
                "question": "Where is the opacity? (s1)",
                "answer": "C",
                "reason": "Left base.",
                "choices": ["A: Right apex", "B: Right base", "C: Left base"],
            }
        ],
    )
    write_jsonl(
        root / "multi_choice_question.jsonl",
        [
            {
                **common,
                "q_id": 3,
                "row_id": 3,
                "question": "Which findings? (m1)",
                "answer": ["A", "C"],
                "reason": "Both visible.",
                "choices": ["A: Effusion", "B: Pneumothorax", "C: Cardiomegaly"],
            }
        ],
    )
    write_jsonl(
        root / "open_ended_question.jsonl",
        [
            {
                **common,
                "q_id": 4,
                "row_id": 4,
                "question": "What is the finding? (o1)",
                "answer": "Left pleural effusion.",
                "reason": "Meniscus sign at the left base.",
                "choices": [],
            }
        ],
    )
    return root


OPTIONS = [
    ("A", "小叶型肺炎"),
    ("B", "浸润性肺结核"),
    ("C", "继发性肺结核"),
    ("D", "原发性肺结核"),
    ("E", "粟粒型肺结核"),
]


def exam_row(
    n: int, exam_type: str, exam_class: str, answer: str, multi: bool = False
) -> dict[str, Any]:
    return {
        "exam_type": exam_type,
        "exam_class": exam_class,
        "exam_subject": "口腔执业医师",
        "question": f"第{n}题：此男孩可能患",
        "answer": answer,
        "question_type": "多项选择题" if multi else "单项选择题",
        "option": {label: text for label, text in OPTIONS},
    }


MEDXPERTQA_CARD = """---
license: mit
configs:
- config_name: MM
  data_files:
  - split: dev
    path: MM/dev.jsonl
  - split: test
    path: MM/test.jsonl
- config_name: Text
  data_files:
  - split: dev
    path: Text/dev.jsonl
  - split: test
    path: Text/test.jsonl
---
# MedXpertQA
"""


def medxpertqa_folder(folder: Path) -> Path:
    """The hub snapshot: the card with configs MM and Text, ``MM/{dev,test}.jsonl``,
    ``Text/{dev,test}.jsonl`` (ten options, no images) and ``images.zip`` unpacked into
    ``images/`` (the rows name bare files in it). MM test holds two rows, MM dev one."""
    for name in ("MM-1-a.jpeg", "MM-1-b.jpeg", "MM-2-a.jpeg", "MM-9-a.png"):
        write_png(folder / "images" / name)
    (folder / "README.md").write_text(MEDXPERTQA_CARD, encoding="utf-8")
    rows = [
        {
            "id": "MM-1",
            "question": "Which diagnosis? Answer Choices: (A) a (B) b (C) c (D) d (E) e",
            "options": {
                "A": "Gout",
                "B": "Pseudogout",
                "C": "Septic arthritis",
                "D": "RA",
                "E": "OA",
            },
            "label": "C",
            "images": ["MM-1-a.jpeg", "MM-1-b.jpeg"],
            "medical_task": "Diagnosis",
            "body_system": "Skeletal",
            "question_type": "Reasoning",
        },
        {
            "id": "MM-2",
            "question": "Next step?",
            "options": {"A": "CT", "B": "MRI", "C": "Biopsy", "D": "Wait", "E": "Surgery"},
            "label": "A",
            "images": ["MM-2-a.jpeg"],
            "medical_task": "Treatment",
            "body_system": "Nervous",
            "question_type": "Understanding",
        },
    ]
    write_jsonl(folder / "MM" / "test.jsonl", rows)
    write_jsonl(
        folder / "MM" / "dev.jsonl",
        [{**rows[1], "id": "MM-9", "images": ["MM-9-a.png"], "question": "Dev question?"}],
    )
    text_options = {label: f"option {label}" for label in "ABCDEFGHIJ"}
    for split in ("dev", "test"):
        write_jsonl(
            folder / "Text" / f"{split}.jsonl",
            [
                {
                    "id": f"Text-{split}",
                    "question": "Text only?",
                    "options": text_options,
                    "label": "J",
                    "medical_task": "Diagnosis",
                    "body_system": "Skeletal",
                    "question_type": "Reasoning",
                }
            ],
        )
    return folder


def cmb_exam_file(path: Path) -> Path:
    """A CMB-Exam test file: two single-answer questions and one multi-answer question."""
    return write_json(
        path,
        [
            exam_row(1, "医师考试", "口腔执业医师", "D"),
            exam_row(2, "医师考试", "临床执业医师", "B"),
            exam_row(3, "护理考试", "护士执业资格", "AC", multi=True),
        ],
    )


# As the published CMB-Clin-qa.json holds it: the reference under ``answer`` (the README's
# example says ``solution``).
CMB_CLIN_CASE: dict[str, Any] = {
    "id": 0,
    "title": "案例分析-腹外疝",
    "description": "病人,男,49岁,右下腹痛3小时。",
    "QA_pairs": [
        {"question": "简述诊断。", "answer": "嵌顿性腹股沟斜疝。"},
        {"question": "简述治疗原则。", "answer": "紧急手术。"},
    ],
}


def cmb_clin_file(path: Path) -> Path:
    return write_json(path, [CMB_CLIN_CASE])


CMB_CARD = """---
license: apache-2.0
configs:
- config_name: CMB-Clin
  data_files:
  - split: test
    path: CMB-Clin/CMB-Clin-qa.json
- config_name: CMB-Exam
  data_files:
  - split: test
    path: CMB-Exam/CMB-test/CMB-test-choice-question-merge.json
  - split: train
    path: CMB-Exam/CMB-train/CMB-train-merge.json
  - split: val
    path: CMB-Exam/CMB-val/CMB-val-merge.json
---
# CMB
"""


def cmb_snapshot(root: Path) -> Path:
    """The hub snapshot: the card, CMB-Exam's three splits (the test questions with ids and
    no answers, a category file and a placeholder beside each), CMB-Clin, and the copy of
    CMB-Clin-qa.json at the root. Returns the root; ``cmb_answer_key`` writes the key."""
    (root).mkdir(parents=True, exist_ok=True)
    (root / "README.md").write_text(CMB_CARD, encoding="utf-8")
    exam = root / "CMB-Exam"
    questions = [
        {k: v for k, v in exam_row(n, t, c, a, multi=len(a) > 1).items() if k != "answer"}
        | {"id": str(n)}
        for n, t, c, a in CMB_TEST_ANSWERS
    ]
    write_json(exam / "CMB-test" / "CMB-test-choice-question-merge.json", questions)
    val = [exam_row(9, "医师考试", "口腔执业医师", "D") | {"explanation": "因为D。"}]
    write_json(exam / "CMB-val" / "CMB-val-merge.json", val)
    write_json(
        exam / "CMB-train" / "CMB-train-merge.json",
        [exam_row(99, "医师考试", "口腔执业医师", "A") | {"explanation": "因为A。"}],
    )
    for split in ("test", "val", "train"):
        write_json(
            exam / f"CMB-{split}" / f"CMB-{split}-choice-hierarchy.json",
            {"医师考试": ["口腔执业医师"]},
        )
        (exam / f"CMB-{split}" / "a").write_text("", encoding="utf-8")
    write_json(root / "CMB-Clin" / "CMB-Clin-qa.json", [CMB_CLIN_CASE])
    write_json(root / "CMB-Clin-qa.json", [CMB_CLIN_CASE])
    return root


# (id, exam_type, exam_class, answer) of the snapshot's test questions.
CMB_TEST_ANSWERS = [
    (1, "医师考试", "口腔执业医师", "D"),
    (2, "医师考试", "临床执业医师", "B"),
    (3, "护理考试", "护士执业资格", "AC"),
]


def cmb_answer_key(path: Path) -> Path:
    """The test answer key as the GitHub repository publishes it (integer ids)."""
    return write_json(
        path,
        [
            {
                "id": n,
                "exam_type": t,
                "exam_class": c,
                "exam_subject": "口腔执业医师",
                "question_type": "多项选择题" if len(a) > 1 else "单项选择题",
                "answer": a,
            }
            for n, t, c, a in CMB_TEST_ANSWERS
        ],
    )


MED_CMR_MCQ = [
    {
        "index": 0,
        "question": "Which lobe holds the nodule?",
        "image_path": "dataset/imgs/ct_1.png",
        "A": "A) Right upper lobe",
        "B": "B) Left lower lobe",
        "C": "C) Right middle lobe",
        "D": "D) Lingula",
        "E": "E) Left upper lobe",
        "answer": "A",
        "visual_description": "Axial chest CT with a spiculated nodule; LEAKMARK-0 no leak here.",
        "task": "Spatial Understanding",
        "subtype": "Localization",
        "question type": "MCQ",
        "modality": "CT",
        "organ system": "Respiratory System",
    },
    {
        "index": 1,
        "question": "What is the most likely diagnosis?",
        "image_path": "dataset/imgs/mr_1.png",
        "A": "Glioblastoma",
        "B": "Meningioma",
        "C": "Abscess",
        "D": "Metastasis",
        "answer": "B",
        "visual_description": "Extra-axial dural-based mass typical of a meningioma. LEAKMARK-1",
        "task": "Long-tail Generalization",
        "subtype": "Diagnosis",
        "question type": "MCQ",
        "modality": "MRI",
        "organ system": "Nervous System",
    },
]
MED_CMR_OPEN = [
    {
        "index": 2,
        "question": "Describe the main abnormality.",
        "image_path": "dataset/imgs/xr_1.png",
        "answer": "Left pneumothorax",
        "visual_description": "Left pneumothorax. LEAKMARK-2",
        "task": "Causal Reasoning",
        "subtype": "Finding",
        "question type": "Open-ended",
        "modality": "X-ray",
        "organ system": "Respiratory System",
    },
    {
        "index": 3,
        "question": "What will happen next?",
        "image_paths": ["dataset/imgs/ct_1.png"],
        "answer": "Growth of the nodule",
        "visual_description": "Nodule, LEAKMARK-3.",
        "task": "Temporal Prediction",
        "subtype": "Prognosis",
        "question type": "Open-ended",
        "modality": "CT",
        "organ system": "Respiratory System",
    },
]


# The release's two record files, as dataset.zip holds them (JSON arrays).
MED_CMR_MCQ_FILE = "cmed.copy.mcq_cate.cleaned.json"
MED_CMR_OPEN_FILE = "cmed.copy.open_taged.cleaned.json"


def med_cmr_release(root: Path) -> Path:
    """The release as unzipped: ``dataset/`` holding the MCQ and open records as JSON arrays
    and the images in ``dataset/imgs/`` (the records' ``image_path`` is relative to the
    folder that holds ``dataset/``), a backup file, and the ``__MACOSX/`` folder a Mac's
    zip leaves."""
    folder = root / "dataset"
    for name in ("ct_1.png", "mr_1.png", "xr_1.png"):
        write_png(folder / "imgs" / name, size=(48, 48))
    write_json(folder / MED_CMR_MCQ_FILE, MED_CMR_MCQ)
    write_json(folder / MED_CMR_OPEN_FILE, MED_CMR_OPEN)
    (folder / f"{MED_CMR_MCQ_FILE}.bak").write_text("[]", encoding="utf-8")
    apple = root / "__MACOSX" / "dataset" / f"._{MED_CMR_MCQ_FILE}"
    apple.parent.mkdir(parents=True, exist_ok=True)
    apple.write_bytes(b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X")
    return root


def med_cmr_zip(path: Path) -> Path:
    """The release archive itself, ``dataset.zip``."""
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        release = med_cmr_release(Path(scratch) / "release")
        archive = shutil.make_archive(str(path.with_suffix("")), "zip", release)
    return Path(archive)


# The card's header as published (features and split sizes; no configs: the hub reads the
# splits from the file names).
VQA_RAD_CARD = """---
license: cc0-1.0
task_categories:
- visual-question-answering
dataset_info:
  features:
  - name: image
    dtype: image
  - name: question
    dtype: string
  - name: answer
    dtype: string
  splits:
  - name: train
    num_examples: 1793
  - name: test
    num_examples: 451
---
# VQA-RAD
"""


def image_rows(split: str, count: int) -> datasets.Dataset:
    """Rows of the image/question/answer schema, each question naming its split."""
    return datasets.Dataset.from_dict(
        {
            "image": [Image.new("L", (6, 6), 20 * i) for i in range(count)],
            "question": [f"{split} question {i}?" for i in range(count)],
            "answer": ["yes" if i % 2 else "liver" for i in range(count)],
        }
    ).cast_column("image", datasets.Image())


def vqa_rad_snapshot(root: Path) -> Path:
    """``flaviagiammarino/vqa-rad`` at its pinned commit: the card and two parquet shards."""
    (root / "data").mkdir(parents=True)
    (root / "README.md").write_text(VQA_RAD_CARD, encoding="utf-8")
    image_rows("train", 4).to_parquet(
        str(root / "data" / "train-00000-of-00001-eb8844602202be60.parquet")
    )
    image_rows("test", 3).to_parquet(
        str(root / "data" / "test-00000-of-00001-e5bc3d208bb4deeb.parquet")
    )
    return root


PATH_VQA_SHARDS = {
    "train": ["00000-of-00002-f2d0e9ef9f022d38", "00001-of-00002-47d8e0220bf6c933"],
    "validation": ["00000-of-00001-90a5518d26493b67"],
    "test": [
        "00000-of-00003-e9adadb4799f44d3",
        "00001-of-00003-7ea98873fc919813",
        "00002-of-00003-1628308435019820",
    ],
}


def path_vqa_snapshot(root: Path) -> Path:
    """``flaviagiammarino/path-vqa`` as published: every split in several shards."""
    (root / "data").mkdir(parents=True)
    (root / "README.md").write_text("---\nlicense: mit\n---\n# PathVQA\n", encoding="utf-8")
    (root / "scripts").mkdir()
    (root / "scripts" / "processing.py").write_text("# how the shards were made\n", "utf-8")
    for split, shards in PATH_VQA_SHARDS.items():
        for shard in shards:
            image_rows(f"{split} {shard[:5]}", 2).to_parquet(
                str(root / "data" / f"{split}-{shard}.parquet")
            )
    return root


SLAKE_ROW = {
    "img_id": 0,
    "img_name": "xmlab0/source.jpg",
    "question": "Which modality is this?",
    "answer": "MRI",
    "q_lang": "en",
    "location": "Abdomen",
    "modality": "MRI",
    "answer_type": "OPEN",
    "base_type": "vqa",
    "content_type": "Modality",
    "triple": ["vhead", "_", "_"],
    "qid": 9835,
}


def slake_snapshot(root: Path, unpacked: bool = True) -> Path:
    """``BoKelvin/SLAKE`` as published: three JSON files, imgs.zip (members under imgs/),
    KG.zip and mask.txt; ``unpacked`` also leaves imgs.zip unpacked beside it."""
    root.mkdir(parents=True)
    splits = {"train": (0, 9835), "validation": (1, 11834), "test": (2, 11934)}
    for split, (image, qid) in splits.items():
        rows = [
            {
                **SLAKE_ROW,
                "img_id": image,
                "img_name": f"xmlab{image}/source.jpg",
                "qid": qid,
                "question": f"{split}: which modality?",
            },
            {
                **SLAKE_ROW,
                "img_id": image,
                "img_name": f"xmlab{image}/source.jpg",
                "qid": qid + 1,
                "q_lang": "zh",
                "question": f"{split}: 这是什么模态?",
                "answer": "磁共振",
            },
        ]
        write_json(root / f"{split}.json", rows)
        write_png(root / "imgs" / f"xmlab{image}" / "source.jpg")
    with zipfile.ZipFile(root / "imgs.zip", "w") as archive:
        for image_file in (root / "imgs").rglob("*.jpg"):
            archive.write(image_file, str(image_file.relative_to(root)))
    with zipfile.ZipFile(root / "KG.zip", "w") as archive:
        archive.writestr("KG/en_disease.csv", "a,b\n")
    (root / "mask.txt").write_text("1:liver\n", encoding="utf-8")
    if not unpacked:
        import shutil

        shutil.rmtree(root / "imgs")
    return root
