"""The review session's mechanics: where the page is (navigation, address, identity), what comes
next (queue, tally), key presses and reconnects, paging, the label buttons' actions and the HTML
of the review page.  The data it records lives in :mod:`citecheck.labelling`."""
