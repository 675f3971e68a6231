/* The "Try the translator" page: the book's tiny Transformer, run in the reader's browser.
 *
 * A second telling of the model the book builds, in plain JavaScript: the tokenizer (NFC/NFKC,
 * Metaspace and Punctuation pre-tokenizers, byte-pair merges), the embedding times sqrt(D) plus
 * sinusoidal positions, pre-norm encoder and decoder blocks (multi-head attention, ReLU
 * feed-forward network), the final LayerNorms and the tied output projection; greedy search and
 * beam search as transformer_tutorial.decoding writes them (the source length + 50 output limit,
 * GNMT's length penalty, the first of equal scores wins). Weights come from <script src> files
 * written by tools/web_translator.py, loaded on first use. No library, no network, no eval.
 * Everything the reader typed, and every token, reaches the page through textContent only.
 */
(function () {
  "use strict";
  var AVAILABLE = /*AVAILABLE*/[];
  var SCRIPT = document.currentScript;
  var BASE = SCRIPT ? SCRIPT.src.replace(/[^\/]*$/, "") : "";
  var ZH = /^zh/i.test(document.documentElement.lang || "");
  var BOS = 2, EOS = 3;
  var T = ZH ? {
    pair: "语言", de: "德语 → 英语", zh: "中文 → 英语", search: "搜索",
    greedy: "贪心搜索", beam: "束搜索（束宽 4）", go: "翻译", placeholder: "在这里输入德语或中文句子",
    loading: "正在载入模型（约 {mb} MB，只在第一次使用时载入）……",
    loaded: "模型已载入，用时 {s} 秒。", working: "正在翻译……",
    empty: "请先输入一个句子。", missing: "本次构建没有附带 {pair} 模型。",
    failed: "模型没能载入：{err}",
    took: "{how}，用时 {s} 秒，{n} 个输出词元", cut: "第 {line} 行有 {n} 个词元，模型最多读 {limit} 个，已截取前 {limit} 个。",
    unk: "有 {n} 个词元是模型不认识的（<unk>）。", unkZh: "这个模型只学过简体中文；繁体字、表情符号和罕见字都算作不认识的词元。",
    unkDe: "这个模型只学过德语（Multi30k 的图片描述）；其他语言的词大多被切成零碎的子词。",
    view: "交叉注意力：输出词元（行）对源词元（列）",
    layer: "层", head: "头", corner: "查询 \\ 键",
    hint: "颜色越深，权重越大（白色为 0，深蓝为 1）。把鼠标指向某个词元，或用 Tab 键移到它上面，就能看到它关注哪里。",
    attends: "“{q}”（第 {i} 个查询）关注 {m}", none: "没有可见的键（全部被掩码）",
    receives: "键“{k}”（第 {j} 个键）从 {n} 个查询共得到 {w} 的权重",
    lines: "只显示第一行的注意力。", of: " · 第 {a} 层（共 {b} 层）", ofh: " · 第 {a} 个头（共 {b} 个）"
  } : {
    pair: "language", de: "German → English", zh: "Chinese → English", search: "search",
    greedy: "greedy search", beam: "beam search (4 beams)", go: "Translate",
    placeholder: "Type a German or a Chinese sentence here",
    loading: "Loading the model (about {mb} MB, only the first time)…",
    loaded: "Model loaded in {s} s.", working: "Translating…",
    empty: "Type a sentence first.", missing: "This build of the book has no {pair} model.",
    failed: "The model could not be loaded: {err}",
    took: "{how}, {s} s, {n} output tokens",
    cut: "Line {line} has {n} tokens; the model reads at most {limit}, so it was cut to its first {limit} tokens.",
    unk: "{n} tokens are unknown to the model (<unk>).",
    unkZh: "This model learned Simplified Chinese only: Traditional characters, emoji and rare characters are unknown tokens to it.",
    unkDe: "This model learned German only (Multi30k's picture captions): words of other languages fall apart into small pieces.",
    view: "Cross-attention: output tokens (rows) over source tokens (columns)",
    layer: "layer", head: "head", corner: "query \\ key",
    hint: "Darker = more weight (white 0, dark blue 1). Point at or tab to a token to see where it attends.",
    attends: "\u201c{q}\u201d (query {i}) attends to {m}", none: "no key (all masked)",
    receives: "key \u201c{k}\u201d (key {j}) receives {w} of the {n} queries' weight",
    lines: "The attention view shows the first line.", of: " · layer {a} of {b}", ofh: " · head {a} of {b}"
  };
  function fmt(s, o) { return s.replace(/\{(\w+)\}/g, function (_, k) { return String(o[k]); }); }

  // ---------------------------------------------------------------- the tokenizer (BPE) ----
  var ASCII_PUNCT = /[!-\/:-@\[-`{-~]/, UNI_PUNCT = /\p{P}/u;
  function isPunct(c) { return ASCII_PUNCT.test(c) || UNI_PUNCT.test(c); }

  function Tokenizer(d) {
    this.form = d.normalizer; this.vocab = d.vocab; this.special = d.special || [];
    this.ids = new Map(); for (var i = 0; i < d.vocab.length; i++) this.ids.set(d.vocab[i], i);
    this.ranks = new Map(); var m = d.merges || [];
    for (var r = 0; r < m.length; r++) if (!this.ranks.has(m[r])) this.ranks.set(m[r], r);
    this.unk = this.ids.get(d.unk || "<unk>"); this.cache = new Map();
    this.isSpecial = new Set(); for (var s = 0; s < this.special.length; s++) this.isSpecial.add(this.ids.get(this.special[s]));
  }
  // Added (special) tokens are found in the raw text first, as the tokenizers library does.
  Tokenizer.prototype.encode = function (text) {
    var out = [], rest = text, sp = this.special;
    while (rest.length) {
      var at = -1, hit = null;
      for (var i = 0; i < sp.length; i++) {
        var k = rest.indexOf(sp[i]);
        if (k >= 0 && (at < 0 || k < at || (k === at && sp[i].length > hit.length))) { at = k; hit = sp[i]; }
      }
      var seg = at < 0 ? rest : rest.slice(0, at);
      if (seg.length) this.encodeText(seg, out);
      if (at < 0) break;
      out.push(this.ids.get(hit)); rest = rest.slice(at + hit.length);
    }
    return out;
  };
  Tokenizer.prototype.encodeText = function (seg, out) {
    var s = seg.normalize(this.form).replace(/ /g, "\u2581");
    if (s.charAt(0) !== "\u2581") s = "\u2581" + s;            // Metaspace, prepend "always"
    var words = [], cur = "", chars = Array.from(s);
    for (var i = 0; i < chars.length; i++) {                     // split, merged with next
      if (chars[i] === "\u2581" && cur) { words.push(cur); cur = ""; }
      cur += chars[i];
    }
    if (cur) words.push(cur);
    for (var w = 0; w < words.length; w++) {                     // Punctuation, isolated
      var cs = Array.from(words[w]), run = "";
      for (var j = 0; j < cs.length; j++) {
        if (isPunct(cs[j])) { if (run) this.bpe(run, out); this.bpe(cs[j], out); run = ""; }
        else run += cs[j];
      }
      if (run) this.bpe(run, out);
    }
  };
  // Byte-pair merges in the tokenizers library's order: the lowest-ranked adjacent pair first,
  // the leftmost of equal ranks first (a heap of candidate pairs, stale ones skipped).
  Tokenizer.prototype.bpe = function (word, out) {
    var hit = this.cache.get(word);
    if (!hit) { hit = this.bpeWord(word); if (word.length < 64) this.cache.set(word, hit); }
    for (var i = 0; i < hit.length; i++) out.push(hit[i]);
  };
  Tokenizer.prototype.bpeWord = function (word) {
    var sym = Array.from(word), n = sym.length, prev = [], next = [], known = [], ranks = this.ranks, ids = this.ids;
    for (var i = 0; i < n; i++) { prev.push(i - 1); next.push(i + 1 < n ? i + 1 : -1); known.push(ids.has(sym[i])); }
    var heap = [];
    function less(a, b) { return a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]); }
    function push(e) { heap.push(e); var k = heap.length - 1; while (k > 0) { var p = (k - 1) >> 1; if (!less(heap[k], heap[p])) break; var t = heap[k]; heap[k] = heap[p]; heap[p] = t; k = p; } }
    function pop() { var top = heap[0], last = heap.pop(); if (heap.length) { heap[0] = last; var k = 0; for (;;) { var l = 2 * k + 1, r = l + 1, m = k; if (l < heap.length && less(heap[l], heap[m])) m = l; if (r < heap.length && less(heap[r], heap[m])) m = r; if (m === k) break; var t = heap[k]; heap[k] = heap[m]; heap[m] = t; k = m; } } return top; }
    function cand(p) { var q = next[p]; if (q < 0 || !known[p] || !known[q]) return; var r = ranks.get(sym[p] + " " + sym[q]); if (r !== undefined) push([r, p, sym[p], sym[q]]); }
    for (var a = 0; a < n; a++) cand(a);
    while (heap.length) {
      var e = pop(), p = e[1], q = next[p];
      if (sym[p] !== e[2] || q < 0 || sym[q] !== e[3]) continue;   // stale
      sym[p] = e[2] + e[3]; known[p] = ids.has(sym[p]); sym[q] = null;
      next[p] = next[q]; if (next[q] >= 0) prev[next[q]] = p;
      if (prev[p] >= 0) cand(prev[p]);
      cand(p);
    }
    var res = [];
    for (var k = 0; k >= 0 && k < n; k = next[k]) res.push(known[k] ? ids.get(sym[k]) : this.unk);
    return res;
  };
  // transformer_tutorial.tokens.decode: up to the first EOS, special tokens dropped, then the
  // Metaspace decoder (the marker becomes a space; the first token loses its leading one).
  Tokenizer.prototype.decode = function (ids) {
    var out = "", first = true;
    for (var i = 0; i < ids.length; i++) {
      if (ids[i] === EOS) break;
      if (this.isSpecial.has(ids[i])) continue;
      var t = this.vocab[ids[i]].replace(/\u2581/g, " ");
      if (first && t.charAt(0) === " ") t = t.slice(1);
      first = false; out += t;
    }
    return out;
  };

  // --------------------------------------------------------------------- the model ----
  function halfToFloat(h) {
    var s = (h & 0x8000) ? -1 : 1, e = (h >> 10) & 0x1f, f = h & 0x3ff;
    if (e === 0) return s * f * Math.pow(2, -24);
    if (e === 31) return f ? NaN : s * Infinity;
    return s * (1 + f / 1024) * Math.pow(2, e - 15);
  }
  function Model(d) {
    var c = this.c = d.config, bin = atob(d.weights), n = bin.length >> 1, w = new Float32Array(n), table = new Float32Array(65536);
    for (var h = 0; h < 65536; h++) table[h] = halfToFloat(h);
    for (var i = 0; i < n; i++) w[i] = table[bin.charCodeAt(2 * i) | (bin.charCodeAt(2 * i + 1) << 8)];
    var W = this.W = {};
    for (var name in d.tensors) { var t = d.tensors[name], size = t[1].reduce(function (a, b) { return a * b; }, 1); W[name] = w.subarray(t[0], t[0] + size); }
    this.D = c.d_model; this.H = c.num_heads; this.Dh = c.d_model / c.num_heads; this.scale = Math.sqrt(c.d_model);
    // Sinusoidal positions, computed as positional.py does (float64, then float32).
    var D = this.D, L = c.max_len, pe = this.pe = new Float32Array(L * D);
    for (var p = 0; p < L; p++) for (var j = 0; j < D; j += 2) {
      var a = p * Math.exp(-Math.log(10000.0) * j / D); pe[p * D + j] = Math.sin(a); pe[p * D + j + 1] = Math.cos(a);
    }
    this.out = c.tie_output ? W["tgt_embed.embedding.weight"] : W["output.weight"];
    this.info = d.info; this.V = c.tgt_vocab_size;
  }
  // y = x W^T + b for one vector x (length I); W is (O, I)
  function linear(x, Wt, b, O, I) {
    var y = new Float32Array(O);
    for (var o = 0; o < O; o++) { var s = b ? b[o] : 0, base = o * I; for (var i = 0; i < I; i++) s += x[i] * Wt[base + i]; y[o] = s; }
    return y;
  }
  function layerNorm(x, g, b) {
    var n = x.length, m = 0, v = 0, y = new Float32Array(n);
    for (var i = 0; i < n; i++) m += x[i]; m /= n;
    for (i = 0; i < n; i++) v += (x[i] - m) * (x[i] - m); v /= n;
    var r = 1 / Math.sqrt(v + 1e-5);
    for (i = 0; i < n; i++) y[i] = (x[i] - m) * r * g[i] + b[i];
    return y;
  }
  function addInto(x, y) { for (var i = 0; i < x.length; i++) x[i] += y[i]; }
  Model.prototype.embed = function (table, id, pos) {
    var D = this.D, x = new Float32Array(D);
    for (var i = 0; i < D; i++) x[i] = Math.fround(table[id * D + i] * this.scale) + this.pe[pos * D + i];
    return x;
  };
  Model.prototype.proj = function (pre, kind, x) {
    var W = this.W, D = this.D;
    return linear(x, W[pre + kind + "_proj.weight"], W[pre + kind + "_proj.bias"], D, D);
  };
  // One query over keys/values (arrays of D-vectors), every head: softmax(q k / sqrt(Dh)) v.
  // Every key given may be attended to (the page decodes one sentence: no padding). Returns
  // the concatenated heads and, per head, the weights.
  Model.prototype.attend = function (q, K, V, keepWeights) {
    var H = this.H, Dh = this.Dh, n = K.length, out = new Float32Array(this.D), ws = keepWeights ? [] : null, sc = 1 / Math.sqrt(Dh);
    var s = new Float64Array(n);
    for (var h = 0; h < H; h++) {
      var o = h * Dh, mx = -Infinity;
      for (var j = 0; j < n; j++) { var k = K[j], a = 0; for (var d = 0; d < Dh; d++) a += q[o + d] * k[o + d]; s[j] = a * sc; if (s[j] > mx) mx = s[j]; }
      var z = 0; for (j = 0; j < n; j++) { s[j] = Math.exp(s[j] - mx); z += s[j]; }
      for (j = 0; j < n; j++) { var p = s[j] / z, v = V[j]; for (d = 0; d < Dh; d++) out[o + d] += p * v[o + d]; s[j] = p; }
      if (ws) ws.push(Array.from(s));
    }
    return { out: out, w: ws };
  };
  Model.prototype.ffn = function (pre, x) {
    var W = this.W, c = this.c;
    var h = linear(x, W[pre + "feed_forward.linear1.weight"], W[pre + "feed_forward.linear1.bias"], c.d_ff, c.d_model);
    for (var i = 0; i < h.length; i++) if (h[i] < 0) h[i] = 0;
    return linear(h, W[pre + "feed_forward.linear2.weight"], W[pre + "feed_forward.linear2.bias"], c.d_model, c.d_ff);
  };
  Model.prototype.block = function (pre, n, x, sub) {   // pre-norm: x + Sublayer(LayerNorm(x))
    var W = this.W, h = this.c.norm_first ? layerNorm(x, W[pre + "norm" + n + ".weight"], W[pre + "norm" + n + ".bias"]) : x;
    var y = sub(h); addInto(x, y);
    return this.c.norm_first ? x : layerNorm(x, W[pre + "norm" + n + ".weight"], W[pre + "norm" + n + ".bias"]);
  };
  // The encoder, one position at a time within each block (yielding to the page now and then).
  Model.prototype.encode = async function (src) {
    var self = this, W = this.W, c = this.c, D = this.D, xs = [];
    for (var p = 0; p < src.length; p++) xs.push(this.embed(W["src_embed.embedding.weight"], src[p], p));
    for (var l = 0; l < c.num_encoder_layers; l++) {
      var pre = "encoder.layers." + l + ".", hs = [], K = [], V = [], i, w;
      for (i = 0; i < xs.length; i++) {
        hs.push(c.norm_first ? layerNorm(xs[i], W[pre + "norm1.weight"], W[pre + "norm1.bias"]) : xs[i]);
        K.push(this.proj(pre + "self_attn.", "k", hs[i])); V.push(this.proj(pre + "self_attn.", "v", hs[i]));
        w = breathe(); if (w) await w;
      }
      for (i = 0; i < xs.length; i++) {
        var x = xs[i], a = this.attend(this.proj(pre + "self_attn.", "q", hs[i]), K, V, false).out;
        addInto(x, linear(a, W[pre + "self_attn.out_proj.weight"], W[pre + "self_attn.out_proj.bias"], D, D));
        if (!c.norm_first) x = layerNorm(x, W[pre + "norm1.weight"], W[pre + "norm1.bias"]);
        xs[i] = this.block(pre, 2, x, function (h) { return self.ffn(pre, h); });
        w = breathe(); if (w) await w;
      }
    }
    if (c.norm_first) xs = xs.map(function (x) { return layerNorm(x, W["encoder.norm.weight"], W["encoder.norm.bias"]); });
    return xs;
  };
  // The cross-attention keys and values of every decoder block, projected once per sentence.
  Model.prototype.memoryKV = function (memory) {
    var self = this, kv = [];
    for (var l = 0; l < this.c.num_decoder_layers; l++) {
      var pre = "decoder.layers." + l + ".cross_attn.";
      kv.push({ K: memory.map(function (m) { return self.proj(pre, "k", m); }), V: memory.map(function (m) { return self.proj(pre, "v", m); }) });
    }
    return kv;
  };
  Model.prototype.newCache = function () { var L = this.c.num_decoder_layers, c = []; for (var l = 0; l < L; l++) c.push({ K: [], V: [] }); return c; };
  Model.prototype.copyCache = function (c) { return c.map(function (l) { return { K: l.K.slice(), V: l.V.slice() }; }); };
  // One decoding step with the key/value cache: the token at position pos -> next-token logits.
  Model.prototype.step = function (token, pos, cache, mem, cross) {
    var self = this, W = this.W, D = this.D, x = this.embed(W["tgt_embed.embedding.weight"], token, pos);
    for (var l = 0; l < this.c.num_decoder_layers; l++) {
      var pre = "decoder.layers." + l + ".", c = cache[l];
      x = this.block(pre, 1, x, function (h) {
        c.K.push(self.proj(pre + "self_attn.", "k", h)); c.V.push(self.proj(pre + "self_attn.", "v", h));
        var a = self.attend(self.proj(pre + "self_attn.", "q", h), c.K, c.V, false).out;
        return linear(a, W[pre + "self_attn.out_proj.weight"], W[pre + "self_attn.out_proj.bias"], D, D);
      });
      x = this.block(pre, 2, x, function (h) {
        var r = self.attend(self.proj(pre + "cross_attn.", "q", h), mem[l].K, mem[l].V, !!cross);
        if (cross) cross.push(r.w);
        return linear(r.out, W[pre + "cross_attn.out_proj.weight"], W[pre + "cross_attn.out_proj.bias"], D, D);
      });
      x = this.block(pre, 3, x, function (h) { return self.ffn(pre, h); });
    }
    if (this.c.norm_first) x = layerNorm(x, W["decoder.norm.weight"], W["decoder.norm.bias"]);
    return linear(x, this.out, null, this.V, D);
  };

  // Yield to the browser now and then, so that the page answers while a sentence is decoded.
  var lastYield = 0, channel = new MessageChannel(), waiting = [];
  channel.port1.onmessage = function () { var f = waiting.shift(); if (f) f(); };
  function breathe() {
    var now = performance.now();
    if (now - lastYield < 25) return null;
    return new Promise(function (r) { waiting.push(r); channel.port2.postMessage(0); }).then(function () { lastYield = performance.now(); });
  }

  function argmaxNoPad(logits, pad) {
    var best = -1, bv = -Infinity;
    for (var v = 0; v < logits.length; v++) if (v !== pad && logits[v] > bv) { bv = logits[v]; best = v; }
    return best;
  }
  // decoding.greedy_decode for one sentence: the most probable token (padding excluded) until
  // EOS or the limit (source length with EOS + 50, at most max_len).
  async function greedy(model, src) {
    var limit = Math.min(src.length + 50, model.c.max_len), mem = model.memoryKV(await model.encode(src));
    var cache = model.newCache(), out = [], tok = BOS;
    for (var t = 1; t <= limit; t++) {
      var w = breathe(); if (w) await w;
      tok = argmaxNoPad(model.step(tok, t - 1, cache, mem), model.c.pad_id);
      out.push(tok);
      if (tok === EOS) break;
    }
    return out;
  }
  function logSoftmax(x) {
    var mx = -Infinity, z = 0, y = new Float64Array(x.length);
    for (var i = 0; i < x.length; i++) if (x[i] > mx) mx = x[i];
    for (i = 0; i < x.length; i++) z += Math.exp(x[i] - mx);
    var lz = mx + Math.log(z);
    for (i = 0; i < x.length; i++) y[i] = x[i] - lz;
    return y;
  }
  // decoding.beam_search for one sentence: K hypotheses ranked by log P / ((5 + |Y|) / 6)^alpha;
  // a finished hypothesis is extended by padding only, at no cost, and keeps competing.
  async function beam(model, src, K, alpha) {
    var limit = Math.min(src.length + 50, model.c.max_len), mem = model.memoryKV(await model.encode(src));
    var V = model.V, pad = model.c.pad_id;
    function lp(n) { return Math.pow((5 + n) / 6, alpha); }
    var hyps = [];
    for (var k = 0; k < K; k++) hyps.push({ tokens: [BOS], logp: k ? -Infinity : 0, fin: false, len: 0, cache: model.newCache() });
    for (var t = 1; t <= limit; t++) {
      var w = breathe(); if (w) await w;
      var cands = [];   // the K best of K * V, by ranked score, then by lower index
      function offer(score, idx, total) {
        if (cands.length === K && !(score > cands[K - 1][0] || (score === cands[K - 1][0] && idx < cands[K - 1][1]))) return;
        var e = [score, idx, total], i = cands.length;
        cands.push(e);
        while (i > 0 && (cands[i - 1][0] < score || (cands[i - 1][0] === score && cands[i - 1][1] > idx))) { cands[i] = cands[i - 1]; i--; }
        cands[i] = e; if (cands.length > K) cands.pop();
      }
      for (k = 0; k < K; k++) {
        var hy = hyps[k];
        if (hy.fin) { offer(hy.logp / lp(hy.len), k * V + pad, hy.logp); continue; }
        if (hy.logp === -Infinity) continue;   // every extension scores -inf: never among the K best
        var step = logSoftmax(model.step(hy.tokens[hy.tokens.length - 1], t - 1, hy.cache, mem)), div = lp(t);
        for (var v = 0; v < V; v++) if (v !== pad) { var tot = hy.logp + step[v]; offer(tot / div, k * V + v, tot); }
      }
      var next = [], used = {};
      for (var c = 0; c < cands.length; c++) {
        var b = Math.floor(cands[c][1] / V), tok = cands[c][1] % V, h = hyps[b];
        var fin = h.fin || tok === EOS || t >= limit;
        next.push({ tokens: h.tokens.concat([tok]), logp: cands[c][2], fin: fin, len: h.fin ? h.len : t,
          cache: used[b] ? model.copyCache(h.cache) : h.cache });
        used[b] = true;
      }
      hyps = next;
      if (hyps.every(function (x) { return x.fin; })) break;
    }
    var best = 0;
    for (k = 1; k < hyps.length; k++) if (hyps[k].logp / lp(hyps[k].len) > hyps[best].logp / lp(hyps[best].len)) best = k;
    return hyps[best].tokens.slice(1);
  }
  // The cross-attention of an output: the decoder reads BOS and the output, and every block's
  // heads record where each output token's query looks in the source. (L, H, T, S)
  async function crossAttention(model, src, out) {
    var mem = model.memoryKV(await model.encode(src)), cache = model.newCache(), rows = [], prev = BOS;
    for (var t = 0; t < out.length; t++) { var cross = [], w = breathe(); if (w) await w; model.step(prev, t, cache, mem, cross); rows.push(cross); prev = out[t]; }
    var L = model.c.num_decoder_layers, H = model.H, W = [];
    for (var l = 0; l < L; l++) { var hl = []; for (var h = 0; h < H; h++) hl.push(rows.map(function (r) { return r[l][h]; })); W.push(hl); }
    return W;
  }

  // ---------------------------------------------------------------- loading ----
  var models = {}, loading = {};
  function loadPair(pair) {
    if (models[pair]) return Promise.resolve(models[pair]);
    if (loading[pair]) return loading[pair];
    if (AVAILABLE.indexOf(pair) < 0) return Promise.reject(new Error(fmt(T.missing, { pair: pair })));
    loading[pair] = new Promise(function (resolve, reject) {
      var t0 = performance.now(), s = document.createElement("script");
      s.src = BASE + pair + ".js";
      s.onload = function () {
        setTimeout(function () {
          try {
            var d = window.TT_MODELS[pair];
            var m = { model: new Model(d), src: new Tokenizer(d.source), tgt: new Tokenizer(d.target), info: d.info };
            delete window.TT_MODELS[pair];
            m.loadSeconds = (performance.now() - t0) / 1000; models[pair] = m; resolve(m);
          } catch (e) { delete loading[pair]; reject(e); }
        }, 0);
      };
      s.onerror = function () { delete loading[pair]; reject(new Error(BASE + pair + ".js")); };
      document.head.appendChild(s);
    });
    return loading[pair];
  }
  // One line, as the translate command does it: stripped; cut to max_len - 1 tokens; EOS.
  async function translateLine(m, line, beamSize) {
    var ids = m.src.encode(line.trim()), limit = m.model.c.max_len - 1, n = ids.length;
    var src = ids.slice(0, limit).concat([EOS]);
    var out = beamSize > 1 ? await beam(m.model, src, beamSize, m.info.length_penalty) : await greedy(m.model, src);
    var end = out.indexOf(EOS), shown = end < 0 ? out : out.slice(0, end + 1);
    return { text: m.tgt.decode(out), ids: out, src: src, tokens: n, cut: n > limit ? limit : 0, shown: shown,
      unk: ids.filter(function (i) { return i === m.src.unk; }).length };
  }

  // -------------------------------------------------------- the attention view ----
  // The markup, classes and behaviour of transformer_tutorial.explore's view, built with
  // textContent: hover or keyboard focus on a token lights its row (or column) and its links.
  var NS = "http://www.w3.org/2000/svg", LEVELS = 256, RAMP = [[255, 255, 255], [107, 174, 214], [8, 48, 107]];
  function colour(v) {
    var t = Math.min(Math.max(v, 0), LEVELS) / LEVELS * (RAMP.length - 1), i = Math.min(Math.floor(t), RAMP.length - 2), f = t - i, s = "#";
    for (var c = 0; c < 3; c++) { var x = Math.floor(RAMP[i][c] + (RAMP[i + 1][c] - RAMP[i][c]) * f + 0.5); s += (x < 16 ? "0" : "") + x.toString(16); }
    return s;
  }
  function el(tag, cls, text) { var e = document.createElement(tag); if (cls) e.className = cls; if (text != null) e.textContent = text; return e; }
  var viewCount = 0;
  function attentionView(weights, queries, keys) {
    var Q = weights.map(function (l) { return l.map(function (h) { return h.map(function (r) { return r.map(function (v) { return Math.round(v * LEVELS); }); }); }); });
    var L = Q.length, H = Q[0].length, st = { l: 0, h: 0 };
    var root = el("div", "tta"); root.id = "tta-live-" + (++viewCount);
    root.appendChild(el("div", "tta-title", T.view));
    var ctl = el("div", "tta-controls");
    [["l", T.layer, L], ["h", T.head, H]].forEach(function (a) {
      var lab = el("label", null, a[1] + " "), sel = el("select"); sel.dataset.k = a[0];
      for (var i = 0; i < a[2]; i++) { var o = el("option", null, String(i + 1)); o.value = String(i); sel.appendChild(o); }
      lab.appendChild(sel); ctl.appendChild(lab); ctl.appendChild(document.createTextNode(" "));
    });
    root.appendChild(ctl);
    var box = el("div", "tta-box"), P = el("div", "tta-panel"); P.dataset.p = "0";
    var table = el("table", "tta-map"), cap = el("caption"); table.appendChild(cap);
    var tr = el("tr"); tr.appendChild(el("th", "tta-corner", T.corner));
    keys.forEach(function (k, j) { var th = el("th", "tta-k", k); th.dataset.j = String(j); th.tabIndex = 0; tr.appendChild(th); });
    table.appendChild(tr);
    queries.forEach(function (q, i) {
      var row = el("tr"); row.dataset.i = String(i);
      var th = el("th", "tta-q", q); th.dataset.i = String(i); th.tabIndex = 0; row.appendChild(th);
      for (var j = 0; j < keys.length; j++) row.appendChild(el("td"));
      table.appendChild(row);
    });
    var svg = document.createElementNS(NS, "svg"); svg.setAttribute("class", "tta-links"); svg.setAttribute("aria-hidden", "true");
    P.appendChild(table); P.appendChild(svg); box.appendChild(P); root.appendChild(box);
    var out = el("div", "tta-readout", T.hint); out.setAttribute("aria-live", "polite"); root.appendChild(out);
    function w(i, j) { return Q[st.l][st.h][i][j]; }
    function draw() {
      var rows = P.querySelectorAll("tr[data-i]");
      for (var i = 0; i < rows.length; i++) { var tds = rows[i].querySelectorAll("td"); for (var j = 0; j < tds.length; j++) tds[j].style.backgroundColor = colour(w(i, j)); }
      cap.textContent = T.layer === "layer" ? "cross-attention" + fmt(T.of, { a: st.l + 1, b: L }) + fmt(T.ofh, { a: st.h + 1, b: H })
        : "交叉注意力" + fmt(T.of, { a: st.l + 1, b: L }) + fmt(T.ofh, { a: st.h + 1, b: H });
      links(-1);
    }
    function links(on) {
      var dy = 21, wd = 290, n = Math.max(queries.length, keys.length);
      while (svg.firstChild) svg.removeChild(svg.firstChild);
      svg.setAttribute("width", wd); svg.setAttribute("height", n * dy + 4);
      function t(x, y, a, str, bold) { var e = document.createElementNS(NS, "text"); e.setAttribute("x", x); e.setAttribute("y", y); e.setAttribute("text-anchor", a); e.textContent = str.slice(0, 14); if (bold) e.setAttribute("font-weight", "bold"); svg.appendChild(e); }
      var top = 1; if (on >= 0) for (var j = 0; j < keys.length; j++) top = Math.max(top, w(on, j));
      for (var i = 0; i < queries.length; i++) for (j = 0; j < keys.length; j++) {
        var v = w(i, j); if (!v || (on >= 0 && i !== on)) continue;
        var e = document.createElementNS(NS, "line"); e.setAttribute("x1", 105); e.setAttribute("x2", 175);
        e.setAttribute("y1", i * dy + dy / 2 + 2); e.setAttribute("y2", j * dy + dy / 2 + 2);
        e.setAttribute("stroke-width", on >= 0 ? 1 + 4 * v / LEVELS : 1); e.setAttribute("stroke-opacity", on >= 0 ? 0.15 + 0.85 * v / top : 0.6 * v / LEVELS);
        svg.appendChild(e);
      }
      for (i = 0; i < queries.length; i++) t(100, i * dy + dy / 2 + 6, "end", queries[i], i === on);
      for (j = 0; j < keys.length; j++) t(180, j * dy + dy / 2 + 6, "start", keys[j], false);
    }
    function clear() { var on = P.querySelectorAll(".tta-on,.tta-col"); for (var i = 0; i < on.length; i++) on[i].classList.remove("tta-on", "tta-col"); }
    function light(i) {
      clear(); P.querySelector('tr[data-i="' + i + '"]').classList.add("tta-on"); links(i);
      var best = []; for (var j = 0; j < keys.length; j++) best.push([w(i, j), j]);
      best.sort(function (a, b) { return b[0] - a[0] || a[1] - b[1]; });
      var m = []; for (var n = 0; n < Math.min(3, best.length); n++) if (best[n][0]) m.push("\u201c" + keys[best[n][1]] + "\u201d " + (best[n][0] / LEVELS).toFixed(2));
      out.textContent = fmt(T.attends, { q: queries[i], i: i + 1, m: m.length ? m.join(ZH ? "，" : ", ") : T.none });
    }
    function lightCol(j) {
      clear(); P.querySelectorAll(".tta-k")[j].classList.add("tta-on");
      var rows = P.querySelectorAll("tr[data-i]"), tot = 0;
      for (var i = 0; i < rows.length; i++) { rows[i].querySelectorAll("td")[j].classList.add("tta-col"); tot += w(i, j); }
      out.textContent = fmt(T.receives, { k: keys[j], j: j + 1, w: (tot / LEVELS).toFixed(2), n: queries.length });
    }
    function on(e) {
      var t = e.target.closest ? e.target.closest("th.tta-q,th.tta-k,td") : null; if (!t || !P.contains(t)) return;
      if (t.classList.contains("tta-q")) light(+t.dataset.i);
      else if (t.classList.contains("tta-k")) lightCol(+t.dataset.j);
      else light(+t.parentNode.dataset.i);
    }
    root.addEventListener("mouseover", on); root.addEventListener("focusin", on); root.addEventListener("click", on);
    ctl.addEventListener("change", function (e) { var k = e.target.dataset.k; if (k) { st[k] = +e.target.value; draw(); } });
    draw();
    return root;
  }

  // ------------------------------------------------------------------ the page ----
  function piece(tok, ids) { return ids.vocab[tok]; }
  function build(app) {
    app.textContent = "";
    var form = el("form", "tt-form"), row = el("div", "tt-row");
    var pairLab = el("label", null, T.pair + " "), pairSel = el("select", "tt-pair");
    [["de-en", T.de], ["zh-en", T.zh]].forEach(function (p) { var o = el("option", null, p[1]); o.value = p[0]; pairSel.appendChild(o); });
    pairLab.appendChild(pairSel);
    var searchLab = el("label", null, T.search + " "), searchSel = el("select", "tt-search");
    [["1", T.greedy], ["4", T.beam]].forEach(function (p) { var o = el("option", null, p[1]); o.value = p[0]; searchSel.appendChild(o); });
    searchLab.appendChild(searchSel);
    var input = el("textarea", "tt-input"); input.rows = 3; input.placeholder = T.placeholder; input.setAttribute("aria-label", T.placeholder);
    var examples = { "de-en": "Ein Hund läuft über die Wiese.", "zh-en": "我们明天去公园散步。" };
    if (ZH) pairSel.value = "zh-en";   // the Chinese edition's reader starts from Chinese
    input.value = examples[pairSel.value];
    var go = el("button", "tt-go", T.go); go.type = "submit";
    row.appendChild(pairLab); row.appendChild(searchLab); row.appendChild(go);
    form.appendChild(input); form.appendChild(row); app.appendChild(form);
    var status = el("div", "tt-status"); status.setAttribute("aria-live", "polite"); app.appendChild(status);
    var output = el("div", "tt-output"); output.setAttribute("lang", "en"); app.appendChild(output);
    var notes = el("div", "tt-notes"); app.appendChild(notes);
    var viewBox = el("div", "tt-view"); app.appendChild(viewBox);
    pairSel.addEventListener("change", function () {
      var pair = pairSel.value;
      if (!input.value.trim() || input.value === examples[pair === "de-en" ? "zh-en" : "de-en"]) input.value = examples[pair];
      prepare(pair).catch(function () {});
    });
    function say(text) { status.textContent = text; }
    function prepare(pair) {
      if (!models[pair]) say(fmt(T.loading, { mb: AVAILABLE.indexOf(pair) < 0 ? "?" : "5" }));
      return loadPair(pair).then(function (m) { if (m.loadSeconds != null) { say(fmt(T.loaded, { s: m.loadSeconds.toFixed(2) })); m.loadSeconds = null; } return m; },
        function (e) { say(e.message.indexOf(pair) >= 0 && AVAILABLE.indexOf(pair) < 0 ? e.message : fmt(T.failed, { err: e.message })); throw e; });
    }
    var busy = false;
    form.addEventListener("submit", async function (ev) {
      ev.preventDefault();
      if (busy) return;
      var pair = pairSel.value, beamSize = +searchSel.value, lines = input.value.split("\n");
      var todo = lines.map(function (l) { return l.trim(); }).filter(function (l) { return l; });
      output.textContent = ""; notes.textContent = ""; viewBox.textContent = "";
      if (!todo.length) { say(T.empty); return; }
      busy = true; go.disabled = true;
      try {
        var m = await prepare(pair);
        say(T.working);
        var t0 = performance.now(), results = [], msgs = [];
        for (var i = 0; i < lines.length; i++) {
          if (!lines[i].trim()) { results.push(""); continue; }
          var r = await translateLine(m, lines[i], beamSize);
          results.push(r);
          if (r.cut) msgs.push(fmt(T.cut, { line: i + 1, n: r.tokens, limit: r.cut }));
        }
        var secs = (performance.now() - t0) / 1000, first = results.filter(function (r) { return r; })[0];
        output.textContent = results.map(function (r) { return r ? r.text : ""; }).join("\n");
        var outTokens = results.reduce(function (a, r) { return a + (r ? r.shown.length : 0); }, 0);
        say(fmt(T.took, { how: beamSize > 1 ? T.beam : T.greedy, s: secs.toFixed(2), n: outTokens }));
        var unk = results.reduce(function (a, r) { return a + (r ? r.unk : 0); }, 0);
        if (unk) msgs.push(fmt(T.unk, { n: unk }) + " " + (pair === "zh-en" ? T.unkZh : T.unkDe));
        if (todo.length > 1) msgs.push(T.lines);
        msgs.forEach(function (s) { notes.appendChild(el("p", null, s)); });
        if (first.shown.length) {
          var W = await crossAttention(m.model, first.src, first.shown);
          viewBox.appendChild(attentionView(W, first.shown.map(function (t) { return m.tgt.vocab[t]; }), first.src.map(function (t) { return m.src.vocab[t]; })));
        }
      } catch (e) {
        if (!status.textContent || status.textContent === T.working) say(fmt(T.failed, { err: e.message }));
      } finally { busy = false; go.disabled = false; }
    });
  }

  // For the browser tests: translate many sentences in one call, as the page does.
  window.translatorForTests = {
    available: AVAILABLE,
    load: function (pair) { return loadPair(pair).then(function (m) { return m.info; }); },
    encode: function (pair, texts) { return loadPair(pair).then(function (m) { return texts.map(function (t) { return m.src.encode(t); }); }); },
    translate: async function (pair, texts, beamSize) {
      var m = await loadPair(pair), out = [];
      for (var i = 0; i < texts.length; i++) {
        var t = texts[i].trim();
        if (!t) { out.push({ text: "", ids: [] }); continue; }
        var r = await translateLine(m, t, beamSize || 1);
        out.push({ text: r.text, ids: r.shown });
      }
      return out;
    }
  };
  function start() { var app = document.getElementById("tt-app"); if (app) build(app); }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start); else start();
})();
