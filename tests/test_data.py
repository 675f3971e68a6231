"""Tests of transformer_tutorial.data: the Multi30k loader (hand-written module).

The tests that read the real files use the copy named by TRANSFORMER_TUTORIAL_DATA (the Makefile
points it at ../shared/data when that exists) and are skipped when there is none. The tests of the
error paths and of the download run anywhere: they use empty temporary folders, a temporary cache,
and a fake `urllib.request.urlopen`, so they never touch the network.
"""

from __future__ import annotations

import gzip
import io
import os
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from transformer_tutorial import data
from transformer_tutorial.data import (
    ENV_VAR,
    MULTI30K_URL,
    DataNotFoundError,
    load_multi30k,
    multi30k_files,
    read_lines,
)


def _shared_multi30k() -> Path | None:
    root = os.environ.get(ENV_VAR) or str(Path(__file__).resolve().parents[2] / "shared" / "data")
    for d in (Path(root), Path(root) / "multi30k"):
        if (d / "train.en.gz").is_file():
            return d
    return None


SHARED = _shared_multi30k()
# Skipped only on a contributor's machine without the data; on CI (CI=true) a missing copy fails.
needs_data = pytest.mark.skipif(
    SHARED is None and not os.environ.get("CI"), reason=f"no Multi30k copy; set {ENV_VAR}"
)


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """No environment variable, and an empty cache of our own: only what a test passes counts."""
    monkeypatch.delenv(ENV_VAR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    empty = tmp_path / "empty"
    empty.mkdir()
    return empty


# --- the real files ----------------------------------------------------------------------------


@needs_data
@pytest.mark.parametrize(
    "split,count,first,last",
    [
        (
            "train",
            29000,
            (
                "Zwei junge weiße Männer sind im Freien in der Nähe vieler Büsche.",
                "Two young, White males are outside near many bushes.",
            ),
            (
                "Ein Mann in Shorts und Hawaiihemd lehnt sich über das Geländer eines Lotsenboots, "
                "mit Nebel und Bergen im Hintergrund.",
                "A man in shorts and a Hawaiian shirt leans over the rail of a pilot boat, with fog "
                "and mountains in the background.",
            ),
        ),
        (
            "val",
            1014,
            (
                "Eine Gruppe von Männern lädt Baumwolle auf einen Lastwagen",
                "A group of men are loading cotton onto a truck",
            ),
            (
                "Zwei Frauen in Rot und ein Mann, der aus einer transportablen Toilette kommt.",
                "Two women wearing red and a man coming out of a port-a-potty.",
            ),
        ),
        (
            "test",
            1000,
            (
                "Ein Mann mit einem orangefarbenen Hut, der etwas anstarrt.",
                "A man in an orange hat starring at something.",
            ),
            (
                "Ein Mädchen an einer Küste mit einem Berg im Hintergrund.",
                "A girl at the shore of a beach with a mountain in the distance.",
            ),
        ),
    ],
)
def test_shared_files_have_the_official_sizes_and_aligned_pairs(split, count, first, last):
    pairs = load_multi30k(split, data_dir=SHARED, download=False)
    assert len(pairs) == count
    assert pairs[0] == first and pairs[-1] == last  # line i of .de goes with line i of .en
    assert all(de and en and de == de.strip() and en == en.strip() for de, en in pairs)


@needs_data
def test_lengths_of_translations_correlate_only_when_aligned():
    pairs = load_multi30k("train", data_dir=SHARED, download=False)
    de = [len(d) for d, _ in pairs]
    en = [len(e) for _, e in pairs]

    def corr(a, b):
        n = len(a)
        ma, mb = sum(a) / n, sum(b) / n
        cov = sum((x - ma) * (y - mb) for x, y in zip(a, b, strict=True))
        va = sum((x - ma) ** 2 for x in a)
        vb = sum((y - mb) ** 2 for y in b)
        return cov / (va * vb) ** 0.5

    assert corr(de, en) > 0.8  # a sentence and its translation have similar lengths
    assert corr(de[1:], en[:-1]) < 0.3  # shifted by one line, they do not


@needs_data
def test_environment_variable_and_directions(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV_VAR, str(SHARED))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    files = multi30k_files("val", download=False)
    assert files["de"].name == "val.de.gz" and files["en"].name == "val.en.gz"
    de_en = load_multi30k("val", download=False)
    en_de = load_multi30k("val", download=False, src_lang="en", tgt_lang="de")
    assert en_de == [(en, de) for de, en in de_en]


@needs_data
def test_plain_text_files_in_a_multi30k_subfolder(isolated, tmp_path):
    folder = tmp_path / "mydata" / "multi30k"
    folder.mkdir(parents=True)
    for lang in ("de", "en"):
        with gzip.open(SHARED / f"test_2016_flickr.{lang}.gz", "rb") as src:
            (folder / f"test_2016_flickr.{lang}").write_bytes(src.read())
    plain = load_multi30k("test", data_dir=tmp_path / "mydata", download=False)
    assert plain == load_multi30k("test", data_dir=SHARED, download=False)
    assert read_lines(folder / "test_2016_flickr.en")[0] == plain[0][1]


# --- missing files: clear errors ---------------------------------------------------------------


def _assert_helpful(message: str, folder: Path, stem: str = "train") -> None:
    assert str(folder) in message  # where it looked
    assert "put the files" in message and ENV_VAR in message  # what to do
    for lang in ("de", "en"):  # where to download them
        assert MULTI30K_URL.format(name=f"{stem}.{lang}.gz") in message


def test_missing_directory_without_download(isolated):
    with pytest.raises(DataNotFoundError) as err:
        load_multi30k("train", data_dir=isolated, download=False)
    message = str(err.value)
    _assert_helpful(message, isolated)
    assert "downloading is switched off" in message
    assert isinstance(err.value, FileNotFoundError)  # callers may catch the standard error


def test_blocked_network_gives_the_same_clear_error(isolated, monkeypatch):
    calls = []

    def blocked(url, *args, **kwargs):
        calls.append(url)
        raise urllib.error.URLError("network is unreachable")

    monkeypatch.setattr(urllib.request, "urlopen", blocked)
    with pytest.raises(DataNotFoundError) as err:
        load_multi30k("val", data_dir=isolated, download=True)
    message = str(err.value)
    _assert_helpful(message, isolated, stem="val")
    assert "downloading failed" in message and "network is unreachable" in message
    assert calls == [MULTI30K_URL.format(name="val.de.gz")]  # it tried the official URL
    assert err.value.__cause__ is None and err.value.__suppress_context__  # no chained traceback


def test_unknown_split_is_a_value_error(isolated):
    with pytest.raises(ValueError, match="choose one of"):
        load_multi30k("dev", data_dir=isolated, download=False)


def test_misaligned_files_are_refused(tmp_path, isolated):
    (tmp_path / "val.de").write_text("eins\nzwei\n", encoding="utf-8")
    (tmp_path / "val.en").write_text("one\n", encoding="utf-8")
    with pytest.raises(ValueError, match="aligned line by line"):
        load_multi30k("val", data_dir=tmp_path, download=False)


# --- the download, with a fake network -----------------------------------------------------------


class _FakeResponse(io.BytesIO):
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


@needs_data
def test_download_checks_the_hash_and_caches_the_files(isolated, monkeypatch, tmp_path):
    served = []

    def fake_urlopen(url, *args, **kwargs):
        name = url.rsplit("/", 1)[1]
        served.append(name)
        return _FakeResponse((SHARED / name).read_bytes())

    monkeypatch.setattr(urllib.request, "urlopen", fake_urlopen)
    pairs = load_multi30k("val", data_dir=isolated, download=True)
    assert served == ["val.de.gz", "val.en.gz"] and len(pairs) == 1014
    cached = tmp_path / "cache" / "transformer_tutorial" / "multi30k"
    assert sorted(p.name for p in cached.iterdir()) == ["val.de.gz", "val.en.gz"]
    # The second time the cache is used and nothing is fetched.
    served.clear()
    assert load_multi30k("val", data_dir=isolated, download=True) == pairs
    assert served == []


def test_download_with_a_wrong_hash_saves_nothing(isolated, monkeypatch, tmp_path):
    monkeypatch.setattr(urllib.request, "urlopen", lambda url, *a, **k: _FakeResponse(b"not gzip"))
    with pytest.raises(DataNotFoundError, match="SHA-256"):
        load_multi30k("test", data_dir=isolated, download=True)
    cached = tmp_path / "cache" / "transformer_tutorial" / "multi30k"
    assert not cached.exists() or not any(cached.iterdir())


def test_cache_dir_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert data.cache_dir() == tmp_path / "transformer_tutorial"


# --- Tatoeba's English-Chinese pairs and the language pairs --------------------------------------

TATOEBA_ROOT = Path(
    os.environ.get(ENV_VAR) or Path(__file__).resolve().parents[2] / "shared" / "data"
)
needs_tatoeba = pytest.mark.skipif(
    not (TATOEBA_ROOT / "cmn-eng" / "cmn.txt.gz").is_file() and not os.environ.get("CI"),
    reason=f"no copy of Tatoeba's cmn.txt; set {ENV_VAR}",
)


@needs_tatoeba
def test_tatoeba_split_is_fixed_disjoint_and_keeps_an_english_sentence_on_one_side():
    from transformer_tutorial.data import load_tatoeba_cmn

    splits = {s: load_tatoeba_cmn(s, TATOEBA_ROOT, "en", "zh") for s in ("train", "val", "test")}
    sizes = {s: len(p) for s, p in splits.items()}
    assert sum(sizes.values()) == 32028  # every line, once
    assert 900 < sizes["val"] < 1150 and 1100 < sizes["test"] < 1400  # about 3% and 4%
    english = {s: {en for en, _ in p} for s, p in splits.items()}
    assert not english["train"] & english["test"] and not english["train"] & english["val"]
    assert not english["val"] & english["test"]
    assert ("Hi.", "嗨。") in splits["train"] or ("Hi.", "嗨。") in splits["test"] + splits["val"]
    # The other direction holds the same pairs, swapped.
    swapped = load_tatoeba_cmn("test", TATOEBA_ROOT, "zh", "en")
    assert swapped == [(zh, en) for en, zh in splits["test"]]


def test_tatoeba_split_depends_on_the_sentence_alone():
    from transformer_tutorial.data import tatoeba_split

    sentences = [f"Sentence number {i}." for i in range(2000)]
    first = [tatoeba_split(s) for s in sentences]
    assert first == [tatoeba_split(s) for s in sentences]  # the same every time
    shares = {s: first.count(s) / len(first) for s in ("train", "val", "test")}
    assert 0.02 < shares["test"] < 0.06 and 0.015 < shares["val"] < 0.045


def test_missing_tatoeba_file_says_where_it_looked_and_how_to_get_it(isolated):
    from transformer_tutorial.data import PAIRS

    with pytest.raises(DataNotFoundError) as info:
        PAIRS["zh-en"].load("train", data_dir=isolated)
    message = str(info.value)
    assert "cmn.txt" in message and str(isolated.resolve()) in message
    assert "manythings.org/anki" in message and ENV_VAR in message


def test_a_small_tatoeba_file_in_a_cmn_eng_subfolder(tmp_path, isolated):
    from transformer_tutorial.data import PAIRS

    lines = [
        f"Line {i}.\t第{i}句。\tCC-BY 2.0 (France) Attribution: tatoeba.org #{i}"
        for i in range(300)
    ]
    (tmp_path / "cmn-eng").mkdir()
    (tmp_path / "cmn-eng" / "cmn.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    pairs = [p for s in ("train", "val", "test") for p in PAIRS["zh-en"].load(s, tmp_path)]
    assert sorted(pairs) == sorted((f"第{i}句。", f"Line {i}.") for i in range(300))


def test_language_pairs_score_each_target_as_its_language_is_written():
    from transformer_tutorial.data import PAIRS

    assert set(PAIRS) == {"de-en", "en-de", "zh-en", "en-zh"}
    assert PAIRS["en-zh"].bleu_tokenize == "zh" and PAIRS["zh-en"].bleu_tokenize == "13a"
    assert PAIRS["de-en"].bleu_tokenize == "13a"
    assert (PAIRS["en-zh"].source, PAIRS["en-zh"].target) == ("en", "zh")
    # NFKC folds the full-width forms Chinese text mixes with ASCII; NFC leaves them.
    assert PAIRS["en-zh"].reference("你好？ＡＢ") == "你好?AB"
    assert PAIRS["de-en"].reference("你好？") == "你好？"
