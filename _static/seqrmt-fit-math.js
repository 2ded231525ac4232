// API reference only: a display equation of a docstring that is wider than the column is
// scaled down to fit (never below 75 %), so that it is read whole instead of scrolled.
// The maths of the chapters is not touched: there, long equations are split by hand.
(function () {
  function fit() {
    document.querySelectorAll('dl.py mjx-container[display="true"]').forEach(function (el) {
      var box = el.closest('div.math') || el.parentElement;
      var need = el.scrollWidth, have = box.clientWidth;
      if (need > have + 1) {
        var scale = Math.max(0.75, (have - 2) / need);
        el.style.fontSize = (100 * scale).toFixed(1) + '%';
      }
    });
  }
  function whenReady() {
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
      MathJax.startup.promise.then(fit);
    }
  }
  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', whenReady);
  } else {
    whenReady();
  }
})();
