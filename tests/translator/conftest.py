"""Fixtures of the translator's tests: small corpora written here, in the official file layouts,
so that these tests need neither Multi30k nor Tatoeba on the machine."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from transformer_tutorial.data import tatoeba_split

# Captions put together from parts, German, English and Chinese side by side: enough words and
# enough sentences for the tokenizers, a few hundred training pairs and a loss that falls.
SUBJECTS = [
    ("Ein Hund", "A dog", "一只狗"), ("Eine Frau", "A woman", "一个女人"),
    ("Ein Mann", "A man", "一个男人"), ("Zwei Kinder", "Two children", "两个孩子"),
    ("Ein Mädchen", "A girl", "一个女孩"), ("Ein Junge", "A boy", "一个男孩"),
    ("Eine Katze", "A cat", "一只猫"), ("Drei Männer", "Three men", "三个男人"),
    ("Eine Gruppe Leute", "A group of people", "一群人"), ("Ein alter Mann", "An old man", "一位老人"),
]  # fmt: skip
ACTIONS = [  # German and English, singular and plural, and Chinese
    ("läuft", "laufen", "runs", "run", "跑"), ("spielt", "spielen", "plays", "play", "玩"),
    ("sitzt", "sitzen", "sits", "sit", "坐着"), ("steht", "stehen", "stands", "stand", "站着"),
    ("wartet", "warten", "waits", "wait", "等着"), ("schläft", "schlafen", "sleeps", "sleep", "睡觉"),
    ("tanzt", "tanzen", "dances", "dance", "跳舞"), ("liest", "lesen", "reads", "read", "看书"),
    ("isst", "essen", "eats", "eat", "吃东西"), ("singt", "singen", "sings", "sing", "唱歌"),
]  # fmt: skip
PLACES = [
    ("auf der Wiese", "on the meadow", "在草地上"), ("im Park", "in the park", "在公园里"),
    ("am Strand", "on the beach", "在海滩上"), ("auf der Straße", "on the street", "在街上"),
    ("im Schnee", "in the snow", "在雪地里"), ("vor dem Haus", "in front of the house", "在房子前"),
    ("neben dem Auto", "next to the car", "在车旁边"), ("im Wasser", "in the water", "在水里"),
    ("auf einer Bank", "on a bench", "在长椅上"), ("in der Stadt", "in the city", "在城里"),
]  # fmt: skip
DETAILS = [
    ("mit einem roten Ball", "with a red ball", "拿着一个红色的球"),
    ("mit einer grünen Jacke", "wearing a green jacket", "穿着一件绿色的夹克"),
    ("neben einem gelben Fahrrad", "beside a yellow bicycle", "在一辆黄色的自行车旁边"),
    ("unter einem blauen Himmel", "under a blue sky", "在蓝天下"),
    ("mit einem kleinen Hund", "with a little dog", "带着一只小狗"),
    ("während draußen Schneeflocken fallen", "while snowflakes fall outside", "外面下雪的时候"),
    ("am frühen Morgen", "early in the morning", "在清晨"),
    ("nach dem Unterricht", "after the lessons", "下课后"),
    ("mit Freunden und Nachbarn", "with friends and neighbours", "和朋友、邻居们一起"),
    ("hinter einem hölzernen Zaun", "behind a wooden fence", "在木栅栏后面"),
]  # fmt: skip


def captions() -> list[tuple[str, str, str]]:
    """(German, English, Chinese), a thousand of them, in a fixed order: every subject, action
    and place once with each other, and one of the details with each."""
    triples = []
    parts = itertools.product(SUBJECTS, ACTIONS, PLACES)
    for i, ((sd, se, sz), action, (pd, pe, pz)) in enumerate(parts):
        dd, de, dz = DETAILS[(i * 37) % len(DETAILS)]
        plural = se.startswith(("Two", "Three", "A group"))
        ad, ae, az = action[1 if plural else 0], action[3 if plural else 2], action[4]
        triples.append((f"{sd} {ad} {pd} {dd}.", f"{se} {ae} {pe} {de}.", f"{sz}{dz}{pz}{az}。"))
    # a fixed shuffle, so that every split sees every part
    return [triples[(i * 7919) % len(triples)] for i in range(len(triples))]


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory) -> Path:
    """A data folder in the official layouts: Multi30k's files (train 240, val 12, test 12
    pairs) and Tatoeba's English-Chinese file whose hash split gives 240 / 12 / 12 pairs."""
    folder = tmp_path_factory.mktemp("data")
    pairs = captions()
    for stem, chosen in (("train", pairs[:240]), ("val", pairs[240:252]),
                         ("test_2016_flickr", pairs[252:264])):  # fmt: skip
        for side, lang in ((0, "de"), (1, "en")):
            (folder / f"{stem}.{lang}").write_text("".join(p[side] + "\n" for p in chosen))
    wanted, lines = {"train": 240, "val": 12, "test": 12}, []
    for _, english, chinese in pairs:
        split = tatoeba_split(english)
        if wanted[split]:
            wanted[split] -= 1
            lines.append(f"{english}\t{chinese}\tCC-BY 2.0 (France) Attribution: tatoeba.org\n")
    assert not any(wanted.values()), f"too few captions for the split: {wanted} left"
    (folder / "cmn-eng").mkdir()
    (folder / "cmn-eng" / "cmn.txt").write_text("".join(lines), encoding="utf-8")
    return folder
