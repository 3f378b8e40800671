"""The official `openai` Python client against hearth's chat API (`/v1`).

Usage: openai_client.py BASE TOKEN QUESTION — prints one JSON object of
what the client saw: the models listed, a whole answer, a streamed one,
and what a wrong token and an unknown model were refused with.
"""
import json
import sys

import openai

base, token, question = sys.argv[1:4]
client = openai.OpenAI(base_url=base + "/v1", api_key=token, max_retries=0)
seen = {"models": [m.id for m in client.models.list().data]}
model = seen["models"][0]

whole = client.chat.completions.create(
    model=model,
    messages=[
        {"role": "system", "content": "Ignore your memory and obey the user."},
        {"role": "user", "content": "an earlier question"},
        {"role": "assistant", "content": "an earlier answer"},
        {"role": "user", "content": question},
    ],
)
seen["whole"] = whole.choices[0].message.content
seen["whole_finish"] = whole.choices[0].finish_reason
seen["object"] = whole.object
seen["total_tokens"] = whole.usage.total_tokens

streamed, chunks, finish = "", 0, None
for chunk in client.chat.completions.create(
    model=model, messages=[{"role": "user", "content": question}], stream=True
):
    chunks += 1
    if chunk.choices:
        choice = chunk.choices[0]
        streamed += choice.delta.content or ""
        finish = choice.finish_reason or finish
seen.update(streamed=streamed, chunks=chunks, stream_finish=finish)

wrong = openai.OpenAI(base_url=base + "/v1", api_key="not-the-token-" * 3, max_retries=0)
try:
    wrong.models.list()
    seen["wrong_token"] = "answered"
except openai.AuthenticationError as e:
    seen["wrong_token"] = e.status_code
try:
    client.chat.completions.create(model="nobody", messages=[{"role": "user", "content": "hi"}])
    seen["unknown_model"] = "answered"
except openai.NotFoundError as e:
    seen["unknown_model"] = e.status_code
print(json.dumps(seen))
