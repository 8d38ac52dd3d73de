"""The controllers' outbound connections: ``protocol.channel`` (shared with the brokers' fetchers)."""

from ..protocol.channel import CLIENT_ID, PeerChannel, decode_response, encode_request

__all__ = ["CLIENT_ID", "PeerChannel", "decode_response", "encode_request"]
