"""Published test vectors the encryption tests check against (hex), with their sources."""

from __future__ import annotations

# FIPS-197 appendix C.1 (AES-128) and C.3 (AES-256): one block.
FIPS197_PLAIN = "00112233445566778899aabbccddeeff"
FIPS197_AES128_KEY = "000102030405060708090a0b0c0d0e0f"
FIPS197_AES128_CIPHER = "69c4e0d86a7b0430d8cdb78070b4c55a"
FIPS197_AES256_KEY = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
FIPS197_AES256_CIPHER = "8ea2b7ca516745bfeafc49904b496089"

# NIST SP 800-38A F.2.5 CBC-AES256.Encrypt: four blocks, no padding.
CBC_KEY = "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4"
CBC_IV = "000102030405060708090a0b0c0d0e0f"
CBC_PLAIN = (
    "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
    "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710"
)
CBC_CIPHER = (
    "f58c4c04d6e5f1ba779eabfb5f7bfbd69cfc4e967edb808d679f777bc6702c7d"
    "39f23369a9d9bacfa530e26304231461b2eb05e2c39be9fcda6c19078c6a9d1b"
)

# McGrew & Viega, "The Galois/Counter Mode of Operation", test case 16 (AES-256, 96-bit IV,
# additional data), also in NIST's GCM validation examples.
GCM_KEY = "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308"
GCM_NONCE = "cafebabefacedbaddecaf888"
GCM_AAD = "feedfacedeadbeeffeedfacedeadbeefabaddad2"
GCM_PLAIN = (
    "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
    "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39"
)
GCM_CIPHER = (
    "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
    "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662"
)
GCM_TAG = "76fc6ece0f4e1768cddf8853bb2d551b"

# golang.org/x/crypto/nacl/secretbox TestSealOpen-style vector (the library Kubernetes'
# secretbox provider calls): key 32 x 0x01, nonce 24 x 0x02, message 64 x 0x03;
# the sealed box is the Poly1305 tag followed by the ciphertext.
SECRETBOX_KEY = "01" * 32
SECRETBOX_NONCE = "02" * 24
SECRETBOX_PLAIN = "03" * 64
SECRETBOX_SEALED = (
    "8442bc313f4626f1359e3b50122b6ce6fe66ddfe7d39d14e637eb4fd5b45beadab55198df6ab5368439792a2"
    "3c87db70acb6156dc5ef957ac04f6276cf6093b84be77ff0849cc33e34b7254d5a8f65ad"
)
# libsodium's secretbox with an all-zero key and nonce sealing b"test" (sodium_sys tests).
SECRETBOX_ZERO_TEST_SEALED = "af99b493f67bfd299fa9207240fba7b3b25bc88b"
