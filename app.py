"""citecheck's Streamlit entry point and router.

    streamlit run app.py -- [--log LOG ...] [--corpus DIR] [--labels FILE]

Every page is listed here explicitly (automatic discovery of pages/ is off).
"""

import streamlit as st

st.set_page_config(page_title="citecheck", layout="wide")

PAGES = [
    st.Page("pages/review.py", title="Review", icon=":material/fact_check:", url_path="review", default=True),
    st.Page("pages/failures.py", title="Failures", icon=":material/monitoring:", url_path="failures"),
    st.Page("pages/calibration.py", title="Judge calibration", icon=":material/balance:", url_path="calibration"),
    st.Page("pages/data.py", title="Data", icon=":material/folder_open:", url_path="data"),
]

st.navigation(PAGES).run()
