// Phone and reader fixes of the book's pages (see also seqrmt-site.css; checked by
// scripts/check_site.py).
//
// 1. The menu buttons. pydata-sphinx-theme 0.17 and sphinx-book-theme 1.3 bind their
//    handlers with document.querySelector(".primary-toggle") / (".secondary-toggle"), which
//    returns pydata's navbar button, hidden in this theme; the visible buttons of the book
//    theme's header got no handler, so on a phone the table of contents (☰) and the page
//    contents (☷) never opened. A click on any other toggle button is forwarded to the
//    bound one: the theme then opens its sidebar dialog (narrow screens) or collapses the
//    sidebar (wide screens), as designed.
// 2. Figures open full size with one tap: every image of the page's content is wrapped in
//    a link to its PNG (a phone shows a figure at about a third of its pixels).
// 3. The whole book as one PDF: where the site holds book.pdf next to index.html, the
//    download menu offers it. Whether it does is window.seqrmtBookPdf, set by
//    _static/seqrmt-pdf.js, which the HTML build and the PDF build write
//    (_ext/seqrmt_site.py, publish_pdf); nothing asks the server for a missing book.pdf.
//    The two scripts may run in either order: each one calls the other's part.
// 4. The page-contents drawer (☷ on a phone) closes once a section is chosen: the theme left
//    it open over about three quarters of the screen, in front of the section just reached.
(function () {
  "use strict";

  function forwardToggles(selector) {
    var buttons = document.querySelectorAll(selector);
    if (buttons.length < 2) return;
    var bound = buttons[0]; // the button the themes bound their handlers to
    Array.prototype.slice.call(buttons, 1).forEach(function (button) {
      if (button.dataset.seqrmtForward) return;
      button.dataset.seqrmtForward = "1";
      button.addEventListener("click", function (event) {
        event.preventDefault();
        event.stopPropagation();
        button.blur(); // drop the tooltip
        bound.click();
      });
    });
  }

  function linkFigures() {
    var content = document.querySelector("article.bd-article") || document.querySelector("main");
    if (!content) return;
    content.querySelectorAll("img").forEach(function (img) {
      if (img.closest("a")) return;
      var src = img.getAttribute("src");
      if (!src || src.indexOf("data:") === 0) return;
      var link = document.createElement("a");
      link.href = src;
      link.className = "seqrmt-figure-link";
      link.title = "Open the figure full size";
      img.parentNode.insertBefore(link, img);
      link.appendChild(img);
    });
  }

  function offerPdf() {
    if (window.seqrmtBookPdf !== true || document.readyState === "loading") return;
    var root = document.documentElement.dataset.content_root || "";
    var menus = document.querySelectorAll(".dropdown-download-buttons ul.dropdown-menu");
    menus.forEach(function (menu) {
      if (menu.querySelector(".seqrmt-book-pdf")) return;
      var item = document.createElement("li");
      var link = document.createElement("a");
      link.href = root + "book.pdf";
      link.className = "btn btn-sm dropdown-item seqrmt-book-pdf";
      link.title = "The whole book as one PDF";
      link.innerHTML =
        '<span class="btn__icon-container"><i class="fas fa-book"></i></span>' +
        '<span class="btn__text-container">Whole book (PDF)</span>';
      item.appendChild(link);
      menu.appendChild(item);
    });
  }
  window.seqrmtOfferPdf = offerPdf; // for seqrmt-pdf.js, when it runs after this script

  function closeDrawersOnChoice() {
    ["pst-secondary-sidebar-modal", "pst-primary-sidebar-modal"].forEach(function (id) {
      var dialog = document.getElementById(id);
      if (!dialog || dialog.dataset.seqrmtCloses) return;
      dialog.dataset.seqrmtCloses = "1";
      dialog.addEventListener("click", function (event) {
        var link = event.target.closest ? event.target.closest("a[href]") : null;
        if (!link || !dialog.open) return;
        // a section of this page: let the browser jump to it, then close the drawer (a link to
        // another page leaves the page anyway)
        if (link.pathname === location.pathname && link.hash) {
          setTimeout(function () { if (dialog.open) dialog.close(); }, 0);
        }
      });
    });
  }

  function run() {
    closeDrawersOnChoice();
    forwardToggles(".primary-toggle");
    forwardToggles(".secondary-toggle");
    linkFigures();
    offerPdf();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", run);
  } else {
    run();
  }
})();
