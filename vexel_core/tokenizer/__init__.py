"""Tokenizers from GGUF metadata, chat templates and streaming detokenization.

    tok = Tokenizer.from_gguf(gguf_file)
    ids = tok.encode("Hello")                       # BOS added where the file says so
    ids = tok.encode_chat([{"role": "user", "content": "Hi"}])
    stream = StreamingDetokenizer(tok, skip_special=True, completion=True)
    text = "".join(stream.push(t) for t in generated) + stream.flush()
"""

from vexel_core.tokenizer.chat import CHATML_TEMPLATE, ChatTemplate
from vexel_core.tokenizer.detokenize import StreamingDetokenizer
from vexel_core.tokenizer.tokenizer import Tokenizer
from vexel_core.tokenizer.vocab import TokenType, Vocab

__all__ = ["CHATML_TEMPLATE", "ChatTemplate", "StreamingDetokenizer", "TokenType", "Tokenizer",
           "Vocab"]
