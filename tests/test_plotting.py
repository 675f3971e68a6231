import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from transformer_tutorial import diagrams, plotting  # noqa: E402


@pytest.fixture(autouse=True)
def _restore_rcparams():
    with matplotlib.rc_context():
        yield
    plt.close("all")


def test_book_style_sets_size_palette_and_a_chinese_font_when_one_is_installed():
    font = plotting.use_book_style()
    rc = matplotlib.rcParams
    assert tuple(rc["figure.figsize"]) == (plotting.FIG_WIDTH, plotting.FIG_HEIGHT)
    assert rc["savefig.dpi"] >= 150
    colors = [c["color"] for c in rc["axes.prop_cycle"]]
    assert colors[:3] == [c.lower() for c in plotting.PALETTE[:3]] or colors[:3] == list(
        plotting.PALETTE[:3]
    )
    if font is not None:  # glyph-by-glyph fallback needs the font in the family list itself
        assert rc["font.family"][-1] == font


def test_chinese_draws_without_missing_glyph_warnings(recwarn):
    if plotting.use_book_style() is None:
        pytest.skip("no CJK font here (make install provides one)")
    fig, ax = plt.subplots()
    ax.set_title("Hello World → 你好世界")
    fig.canvas.draw()
    assert not [w for w in recwarn if "missing from font" in str(w.message)]


def test_legend_outside_keeps_the_legend_off_the_axes():
    plotting.use_book_style()
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1], label="a")
    ax.plot([0, 1], [1, 0], label="b")
    plotting.legend_outside(ax, "right")
    fig.canvas.draw()
    legend = ax.get_legend().get_window_extent()
    assert legend.x0 >= ax.get_window_extent().x1
    with pytest.raises(ValueError, match="right"):
        plotting.legend_outside(ax, "inside")


def test_diagram_boxes_arrows_and_grids():
    fig, ax = diagrams.diagram(xlim=(0, 10), ylim=(0, 5))
    a = diagrams.box(ax, (2, 2), "Q (B, T, Dh)", w=2, h=1, kind="tensor")
    b = diagrams.box(ax, (7, 2), "softmax", kind="attention")
    assert a.right == (3, 2) and a.top == (2, 2.5)
    diagrams.arrow(ax, a.right, b.left, label="(B, T, T)")
    diagrams.grid(ax, [[1, 0], [0.5, 1]], (4, 4.5), cell=0.5, row_labels=["1", "2"])
    # two boxes + two arrows... every grid cell is a patch of its own
    assert len(ax.patches) == 2 + 1 + 4
    with pytest.raises(ValueError, match="kind must be one of"):
        diagrams.box(ax, (1, 1), "x", kind="nonsense")
