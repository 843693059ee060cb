"""citecheck's Streamlit entry point and router.

    streamlit run app.py -- [--log LOG ...] [--corpus DIR] [--labels FILE]

Every page is listed here explicitly.  Streamlit still maps ``/<page>`` to ``pages/<page>.py`` for
the very first request to a fresh server, bypassing this router; each page then hands over to
it (``pages._common.enter``), which sends the browser on to the page it asked for.
"""

import streamlit as st

st.set_page_config(page_title="citecheck", page_icon="🔎", layout="wide")  # (an emoji: drawn by the browser; a page's material icon as the tab's icon was fetched from fonts.gstatic.com)

PAGES = [
    # (the default page is served at the root; "home" is only the name it reserves: /review is
    # the hidden page below, which sends a typed or bookmarked /review?... on to the root)
    st.Page("pages/review.py", title="Review", icon=":material/fact_check:", url_path="home", default=True),
    st.Page("pages/failures.py", title="Failures", icon=":material/monitoring:", url_path="failures"),
    st.Page("pages/disagreements.py", title="Disagreements", icon=":material/gavel:", url_path="disagreements"),
    st.Page("pages/team.py", title="Team", icon=":material/groups:", url_path="team"),
    st.Page("pages/assign.py", title="Assign", icon=":material/assignment_ind:", url_path="assign"),
    st.Page("pages/calibration.py", title="Judge calibration", icon=":material/balance:", url_path="calibration"),
    st.Page("pages/data.py", title="Data", icon=":material/folder_open:", url_path="data"),
]


def _review_by_name() -> None:
    """``/review``: Streamlit serves the default page at the root only, and met ``/review`` (a
    typed or bookmarked address) with its "Page not found" dialog; this hidden page sends it on."""
    st.switch_page(PAGES[0], query_params=st.query_params.to_dict())


st.session_state["_citecheck_router"] = True
page = st.navigation([*PAGES, st.Page(_review_by_name, title="Review", url_path="review", visibility="hidden")])
wanted = st.query_params.get("goto")
if wanted:
    rest = {k: v for k, v in st.query_params.to_dict().items() if k != "goto"}
    target = next((p for p in PAGES if p.url_path == wanted), None)
    if target is None or target.url_path == page.url_path:
        del st.query_params["goto"]  # already there (the default page)
    else:
        st.switch_page(target, query_params=rest)
page.run()
