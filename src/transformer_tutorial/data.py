"""The parallel corpora of the book: find, download (where allowed), cache and read them.

* Multi30k (Task 1, German-English, raw text), the book's main data;
* Tatoeba's English-Chinese (Mandarin) pairs (``cmn.txt`` of manythings.org's ``cmn-eng.zip``,
  sentences by the Tatoeba Project's contributors, CC-BY 2.0 FR), for the second language pair.

``PAIRS`` names each translation direction the training command offers (``--pair``).

Where the files are looked for, in order:

1. the ``data_dir`` argument;
2. the directory named by the environment variable ``TRANSFORMER_TUTORIAL_DATA``;
3. the cache, ``~/.cache/transformer_tutorial`` (or ``$XDG_CACHE_HOME/transformer_tutorial``).

For Multi30k a directory counts when it holds the files itself or in a ``multi30k/`` subfolder,
with the official names (``train.de.gz`` or ``train.de``, ...). When none has them and
``download`` is allowed, the official files are fetched from the Multi30k repository into the
cache and checked by SHA-256. Tatoeba's file (``cmn.txt.gz`` or ``cmn.txt``, itself or in a
``cmn-eng/`` subfolder) is not downloaded: its host serves it only as a zip behind a web page.
"""

from __future__ import annotations

import gzip
import hashlib
import http.client
import os
import tempfile
import unicodedata
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ENV_VAR = "TRANSFORMER_TUTORIAL_DATA"
MULTI30K_URL = "https://raw.githubusercontent.com/multi30k/dataset/master/data/task1/raw/{name}"

# Split name -> file stem in the official repository.
MULTI30K_SPLITS = {"train": "train", "val": "val", "test": "test_2016_flickr"}

# SHA-256 of the official .gz files (multi30k/dataset, data/task1/raw/).
MULTI30K_SHA256 = {
    "train.de.gz": "726e39b2fa9eb9ffb6dc763fb35a179f80fae06ffc5d28b6ace5faa883de28a6",
    "train.en.gz": "d79cfa999dd4c51d2cb42499b6796d5a882c3a8a961923c25a898c90f8bbd56f",
    "val.de.gz": "f0cba2f995189cf5770f29a8a9a537a3ad3f51657ad873405082ff6863a5e75a",
    "val.en.gz": "14f7d25ddd868909a9213e361768460edcacdd6ab9d1e77b92560dc10c10dc28",
    "test_2016_flickr.de.gz": "9204244e408ccb38d2a55cfcd344df15005fc42a07a6e55ca6c52b6ababb8cc8",
    "test_2016_flickr.en.gz": "611d361c6334bc7246101d48097c13cf5c4413c5befc793cc629934359d532d9",
}


class DataNotFoundError(FileNotFoundError):
    """The data files are neither on disk nor downloadable; the message says what to do."""


def cache_dir() -> Path:
    """The folder where downloaded files are kept."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "transformer_tutorial"


def _candidate_dirs(data_dir: str | os.PathLike | None) -> list[Path]:
    roots: list[Path] = []
    if data_dir is not None:
        roots.append(Path(data_dir))
    elif os.environ.get(ENV_VAR):
        roots.append(Path(os.environ[ENV_VAR]))
    roots.append(cache_dir())
    dirs: list[Path] = []
    for root in roots:
        dirs += [root, root / "multi30k"]
    return dirs


def _find(stem: str, lang: str, dirs: list[Path]) -> Path | None:
    for d in dirs:
        for name in (f"{stem}.{lang}.gz", f"{stem}.{lang}"):
            if (d / name).is_file():
                return d / name
    return None


def _download(name: str, dest_dir: Path) -> Path:
    """Fetch one official file into ``dest_dir``, check its hash, and move it in place atomically."""
    dest_dir.mkdir(parents=True, exist_ok=True)
    url = MULTI30K_URL.format(name=name)
    with urllib.request.urlopen(url, timeout=30) as response:  # noqa: S310 (fixed https URL)
        payload = response.read()
    digest = hashlib.sha256(payload).hexdigest()
    if digest != MULTI30K_SHA256[name]:
        raise OSError(f"{url} has SHA-256 {digest}, expected {MULTI30K_SHA256[name]}; not saved.")
    with tempfile.NamedTemporaryFile(dir=dest_dir, delete=False) as tmp:
        tmp.write(payload)
    os.replace(tmp.name, dest_dir / name)
    return dest_dir / name


def _missing_message(split: str, dirs: list[Path], reason: str) -> str:
    stem = MULTI30K_SPLITS[split]
    looked = "\n".join(f"  - {d}" for d in dict.fromkeys(dirs))
    urls = "\n".join(f"  {MULTI30K_URL.format(name=f'{stem}.{lang}.gz')}" for lang in ("de", "en"))
    return (
        f"Multi30k split {split!r} ({stem}.de / {stem}.en) was not found; {reason}.\n"
        f"Looked in:\n{looked}\n"
        f"Fix: put the files (gzipped or plain) in one of these folders, or point "
        f"{ENV_VAR} (or data_dir=...) at a folder that has them. They can be downloaded from:\n{urls}"
    )


def multi30k_files(
    split: str, data_dir: str | os.PathLike | None = None, download: bool = True
) -> dict[str, Path]:
    """Paths of the German and English files of one split, downloading them if allowed.

    Args:
        split: ``"train"``, ``"val"`` or ``"test"`` (test = test_2016_flickr).
        data_dir: a folder with the files (or with a ``multi30k/`` subfolder that has them).
        download: fetch the official files into the cache when they are not found.

    Returns:
        ``{"de": Path, "en": Path}``.
    """
    if split not in MULTI30K_SPLITS:
        raise ValueError(
            f"Unknown Multi30k split {split!r}; choose one of {sorted(MULTI30K_SPLITS)}."
        )
    stem = MULTI30K_SPLITS[split]
    dirs = _candidate_dirs(data_dir)
    found = {lang: _find(stem, lang, dirs) for lang in ("de", "en")}
    missing = [lang for lang, path in found.items() if path is None]
    if missing and download:
        try:
            for lang in missing:
                found[lang] = _download(f"{stem}.{lang}.gz", cache_dir() / "multi30k")
        # URLError, timeouts and bad hashes are OSErrors; a reply cut off mid-way is an HTTPException.
        except (OSError, http.client.HTTPException) as err:
            raise DataNotFoundError(
                _missing_message(split, dirs, f"downloading failed ({err})")
            ) from None
    elif missing:
        raise DataNotFoundError(_missing_message(split, dirs, "downloading is switched off"))
    return found  # type: ignore[return-value]


def read_lines(path: str | os.PathLike) -> list[str]:
    """Read a UTF-8 text file (gzipped when its name ends in .gz), one stripped line per entry."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            return [line.strip() for line in f]
    except (EOFError, gzip.BadGzipFile, UnicodeDecodeError) as err:
        raise ValueError(
            f"{path} is damaged or not UTF-8 text ({type(err).__name__}: {err}); replace it with "
            "a fresh copy (delete it and it is downloaded again where that is possible)."
        ) from None


def load_multi30k(
    split: str = "train",
    data_dir: str | os.PathLike | None = None,
    download: bool = True,
    src_lang: str = "de",
    tgt_lang: str = "en",
) -> list[tuple[str, str]]:
    """Aligned sentence pairs of one Multi30k split, as ``(source, target)`` strings.

    The raw files are read as they are, lines stripped of surrounding white space (a few German
    training lines have stray spaces). Pass ``src_lang="en", tgt_lang="de"`` for the other direction.
    """
    files = multi30k_files(split, data_dir=data_dir, download=download)
    src, tgt = read_lines(files[src_lang]), read_lines(files[tgt_lang])
    if len(src) != len(tgt):
        raise ValueError(
            f"{files[src_lang]} has {len(src)} lines but {files[tgt_lang]} has {len(tgt)}; "
            "the files of one split must be aligned line by line. Re-download them."
        )
    return list(zip(src, tgt, strict=True))


# --- Tatoeba English-Chinese -------------------------------------------------------------------

TATOEBA_PAGE = "https://www.manythings.org/anki/"  # cmn-eng.zip holds cmn.txt
TATOEBA_NAMES = ("cmn.txt.gz", "cmn.txt")
# Held-out shares of the fixed split (percent of the English sentences).
TATOEBA_TEST_PERCENT, TATOEBA_VAL_PERCENT = 4, 3


def tatoeba_split(english: str) -> str:
    """``"train"``, ``"val"`` or ``"test"``, fixed by a hash of the English sentence: the same
    on every machine and for every release of the file, whatever its order, and one English
    sentence with several Chinese translations never lands on both sides of the split."""
    bucket = int(hashlib.sha256(english.encode("utf-8")).hexdigest()[:8], 16) % 100
    if bucket < TATOEBA_TEST_PERCENT:
        return "test"
    return "val" if bucket < TATOEBA_TEST_PERCENT + TATOEBA_VAL_PERCENT else "train"


def tatoeba_file(data_dir: str | os.PathLike | None = None) -> Path:
    """The path of Tatoeba's ``cmn.txt`` (gzipped or plain), or a ``DataNotFoundError`` that
    says where it was looked for and how to get it."""
    dirs = [d / sub for d in _candidate_dirs(data_dir) for sub in (".", "cmn-eng")]
    for d in dirs:
        for name in TATOEBA_NAMES:
            if (d / name).is_file():
                return d / name
    looked = "\n".join(f"  - {d.resolve()}" for d in dict.fromkeys(dirs))
    raise DataNotFoundError(
        f"Tatoeba's English-Chinese pairs ({' or '.join(TATOEBA_NAMES)}) were not found.\n"
        f"Looked in:\n{looked}\n"
        f"Fix: download cmn-eng.zip from {TATOEBA_PAGE}, unzip it, and put cmn.txt in one of "
        f"these folders, or point {ENV_VAR} (or data_dir=...) at a folder that has it."
    )


def load_tatoeba_cmn(
    split: str = "train",
    data_dir: str | os.PathLike | None = None,
    src_lang: str = "zh",
    tgt_lang: str = "en",
) -> list[tuple[str, str]]:
    """Sentence pairs of one split of Tatoeba's English-Chinese file, as ``(source, target)``.

    Each line is ``English<TAB>Chinese<TAB>attribution``; the attribution (Tatoeba sentence
    ids and contributors) is what the licence asks to keep with the data, and is not returned.
    """
    if split not in ("train", "val", "test"):
        raise ValueError(f"Unknown split {split!r}; choose one of ['test', 'train', 'val'].")
    if {src_lang, tgt_lang} != {"en", "zh"}:
        raise ValueError(f"Tatoeba's file pairs en and zh, not {src_lang} and {tgt_lang}.")
    pairs = []
    path = tatoeba_file(data_dir)
    for number, line in enumerate(read_lines(path), start=1):
        fields = line.split("\t")
        if len(fields) < 2:
            raise ValueError(f"{path}, line {number}: expected English<TAB>Chinese<TAB>...")
        english, chinese = fields[0].strip(), fields[1].strip()
        if tatoeba_split(english) == split:
            pairs.append((english, chinese) if src_lang == "en" else (chinese, english))
    return pairs


# --- the language pairs of the training command --------------------------------------------------


@dataclass(frozen=True)
class LanguagePair:
    """One translation direction: its data, how its text is normalised, how it is scored."""

    name: str  # "de-en": source-target
    corpus: str
    test_set: str  # what the test BLEU is measured on
    normalization: str  # Unicode normal form of the tokenizer and of the BLEU references
    load: Callable[..., list[tuple[str, str]]]  # load(split, data_dir=...) -> (source, target)

    @property
    def source(self) -> str:
        return self.name.split("-")[0]

    @property
    def target(self) -> str:
        return self.name.split("-")[1]

    @property
    def bleu_tokenize(self) -> str:
        """sacreBLEU's tokenizer for the target: ``zh`` splits Chinese into characters, ``13a``
        is the standard for languages written with spaces."""
        return "zh" if self.target == "zh" else "13a"

    def reference(self, text: str) -> str:
        """A reference as the model is scored against it: in the tokenizer's normal form."""
        return unicodedata.normalize(self.normalization, text)


def _multi30k(src: str, tgt: str) -> Callable[..., list[tuple[str, str]]]:
    return lambda split, data_dir=None: load_multi30k(split, data_dir, src_lang=src, tgt_lang=tgt)


def _tatoeba(src: str, tgt: str) -> Callable[..., list[tuple[str, str]]]:
    return lambda split, data_dir=None: load_tatoeba_cmn(split, data_dir, src, tgt)


_M30K_TEST = "multi30k test2016 (test_2016_flickr)"
_TATOEBA_TEST = f"tatoeba cmn-eng, hash split ({TATOEBA_TEST_PERCENT}% test)"
PAIRS = {
    f"{src}-{tgt}": LanguagePair(
        f"{src}-{tgt}", corpus, f"{test}, {src}->{tgt}", norm, load(src, tgt)
    )
    for corpus, test, norm, load, langs in (
        ("multi30k", _M30K_TEST, "NFC", _multi30k, ("de", "en")),
        ("tatoeba", _TATOEBA_TEST, "NFKC", _tatoeba, ("zh", "en")),
    )
    for src, tgt in (langs, langs[::-1])
}
