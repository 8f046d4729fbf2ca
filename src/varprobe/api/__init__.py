"""Models behind an OpenAI-compatible HTTP endpoint (OpenAI, vLLM, llama.cpp's servers), queried
for text only: the endpoint's config (``endpoint``), request bodies under a decoding
(``bodies``), a disk cache of replies (``cache``), the HTTP client (``client``), the list-reply
parser (``word_lists``), and the two uses, Provo next words (``provo``) and full productions
(``production``).
"""
