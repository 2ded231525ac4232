// Maths that fits the column (checked by scripts/check_site.py: "clipped-math", "too-wide").
//
// 1. API reference only: a display equation of a docstring that is wider than the column is
//    scaled down to fit (never below 75 %), so that it is read whole instead of scrolled.
//    The maths of the chapters is not touched: there, long equations are split by hand.
// 2. Inline formulas break like TeX's: only after a relation (=, <, \le, \to, ...), a binary
//    operator (+, -, \times, ...) or a comma at the top level of the formula. MathJax 3 never
//    breaks inline maths; seqrmt-site.css lets the browser break between any two of its
//    symbols, and here the symbols between two such points are put in a run that does not
//    break inside (an inline element: nothing moves). A run still wider than the column (a long
//    product, a sum of fractions without an operator at the top) may break anywhere.
(function () {
  "use strict";

  function fitApiEquations() {
    document.querySelectorAll('dl.py mjx-container[display="true"]').forEach(function (el) {
      var box = el.closest('div.math') || el.parentElement;
      var need = el.scrollWidth, have = box.clientWidth;
      if (need > have + 1) {
        var scale = Math.max(0.75, (have - 2) / need);
        el.style.fontSize = (100 * scale).toFixed(1) + '%';
      }
    });
  }

  // MathJax's CHTML output names each character by its code point: <mjx-c class="mjx-c3D">
  var RELATION = /^(3D|3C|3E|2264|2265|2266|2267|2248|223C|2243|2245|2261|2260|226A|226B|221D|2208|2209|220B|2282|2283|2286|2287|2192|2190|2194|21A6|21D2|21D0|21D4|27F6|27F9|27FA|2AAF|2AB0|2223|2225|22A5|2250)$/;
  var BINARY = /^(2B|2212|B1|2213|D7|F7|22C5|2218|2219|2217|2229|222A|2227|2228|2216|2295|2297|2299)$/;
  var PUNCT = /^(2C|3B)$/;

  function codePoint(el) {
    // the code point of a top-level operator with one character, or ""
    if (el.tagName !== 'MJX-MO') return '';
    var chars = el.querySelectorAll('mjx-c');
    if (chars.length !== 1) return '';
    for (var i = 0; i < chars[0].classList.length; i++) {
      var m = /^mjx-c([0-9A-F]+)$/.exec(chars[0].classList[i]);
      if (m) return m[1];
    }
    return '';
  }

  var OPEN = /^(28|5B|7B|27E8|230A|2308)$/, CLOSE = /^(29|5D|7D|27E9|230B|2309)$/;

  function breaksAfter(el, isFirst, depth) {
    var c = codePoint(el);
    if (!c) return false;
    if (BINARY.test(c)) return !isFirst; // a leading "-" is a sign, not an operator
    // a comma only between the items of a list, not inside brackets: "a, b", not "f(a, b)"
    return RELATION.test(c) || (PUNCT.test(c) && depth === 0);
  }

  function groupRuns(math) {
    if (math.dataset.seqrmtRuns) return;
    math.dataset.seqrmtRuns = '1';
    var atoms = Array.prototype.slice.call(math.children);
    if (atoms.length < 3) return;
    var run = null, depth = 0;
    atoms.forEach(function (atom, i) {
      if (!run) {
        run = document.createElement('seqrmt-mrun');
        math.insertBefore(run, atom);
      }
      run.appendChild(atom);
      var c = codePoint(atom), next = atoms[i + 1];
      if (OPEN.test(c)) depth++;
      if (CLOSE.test(c)) depth = Math.max(0, depth - 1);
      // break after the last of several relations in a row (":=", "\le =")
      if (breaksAfter(atom, i === 0, depth) && !(next && RELATION.test(codePoint(next)))) {
        run = null;
      }
    });
  }

  function releaseWideRuns() {
    // a run wider than its paragraph may break anywhere (seqrmt-mrun.seqrmt-wide)
    document.querySelectorAll('article.bd-article seqrmt-mrun').forEach(function (run) {
      run.classList.remove('seqrmt-wide');
      var block = run.closest('p, li, dd, td, div');
      if (!block) return;
      var width = 0;
      Array.prototype.forEach.call(run.children, function (atom) {
        width += atom.getBoundingClientRect().width;
      });
      if (width > block.clientWidth) run.classList.add('seqrmt-wide');
    });
  }

  function breakInlineMaths() {
    document.querySelectorAll(
      'article.bd-article mjx-container[jax="CHTML"]:not([display="true"]) > mjx-math'
    ).forEach(groupRuns);
    releaseWideRuns();
  }

  var resizeTimer = null;
  function whenReady() {
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
      MathJax.startup.promise.then(function () {
        fitApiEquations();
        breakInlineMaths();
        window.addEventListener('resize', function () {
          clearTimeout(resizeTimer);
          resizeTimer = setTimeout(releaseWideRuns, 200);
        });
      });
    }
  }
  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', whenReady);
  } else {
    whenReady();
  }
})();
