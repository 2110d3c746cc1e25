#!/usr/bin/env python3
# Expands the @op(d, n, m) lines of kernels_arm64.s.in into WORD encodings
# (instructions the Go arm64 assembler has no mnemonic for), checks every
# word against GNU as (Debian package binutils-aarch64-linux-gnu), and
# writes the .s file:
#   python3 _asm/arm64/words.py _asm/arm64/kernels_arm64.s.in kernels_arm64.s
import os, re, subprocess, sys, tempfile
tmp = tempfile.mkdtemp()
ENC = {
 'smlal':  lambda d,n,m: 0x0E208000|m<<16|n<<5|d,
 'smlal2': lambda d,n,m: 0x4E208000|m<<16|n<<5|d,
 'sadalp': lambda d,n: 0x4E606800|n<<5|d,
 'fcvtl':  lambda d,n: 0x0E217800|n<<5|d,
 'fcvtl2': lambda d,n: 0x4E217800|n<<5|d,
 'fmul':   lambda d,n,m: 0x6E20DC00|m<<16|n<<5|d,
 'fadd':   lambda d,n,m: 0x4E20D400|m<<16|n<<5|d,
 'faddp':  lambda d,n,m: 0x6E20D400|m<<16|n<<5|d,
 'faddps': lambda d,n: 0x7E30D800|n<<5|d,
 'umaxv':  lambda d,n: 0x6EB0A800|n<<5|d,
 'frintn': lambda d,n: 0x4E218800|n<<5|d,
 'fmin':   lambda d,n,m: 0x4EA0F400|m<<16|n<<5|d,
 'fmax':   lambda d,n,m: 0x4E20F400|m<<16|n<<5|d,
 'fcvtzs': lambda d,n: 0x4EA1B800|n<<5|d,
 'xtnh':   lambda d,n: 0x0E612800|n<<5|d,
 'xtn2h':  lambda d,n: 0x4E612800|n<<5|d,
 'xtnb':   lambda d,n: 0x0E212800|n<<5|d,
 'xtn2b':  lambda d,n: 0x4E212800|n<<5|d,
 'smull':  lambda d,n,m: 0x0E20C000|m<<16|n<<5|d,
 'smull2': lambda d,n,m: 0x4E20C000|m<<16|n<<5|d,
 'smlsl':  lambda d,n,m: 0x0E20A000|m<<16|n<<5|d,
 'smlsl2': lambda d,n,m: 0x4E20A000|m<<16|n<<5|d,
 'smlals': lambda d,n,m: 0x0E608000|m<<16|n<<5|d,
 'smlal2s': lambda d,n,m: 0x4E608000|m<<16|n<<5|d,
 'cmhi':   lambda d,n,m: 0x6E203400|m<<16|n<<5|d,
 'mulb':   lambda d,n,m: 0x4E209C00|m<<16|n<<5|d,
 'sxtlh':  lambda d,n: 0x0F10A400|n<<5|d,
 'sxtl2h': lambda d,n: 0x4F10A400|n<<5|d,
 'sxtlb':  lambda d,n: 0x0F08A400|n<<5|d,
 'saddlp': lambda d,n: 0x4E602800|n<<5|d,
 'scvtf':  lambda d,n: 0x4E21D800|n<<5|d,
 'fmla':   lambda d,n,m: 0x4E20CC00|m<<16|n<<5|d,
 'fmlae':  lambda d,n,m: 0x4F801000|m<<16|n<<5|d,
 'fmule':  lambda d,n,m: 0x4F809000|m<<16|n<<5|d,
 'tbl':    lambda d,n,m: 0x4E000000|m<<16|n<<5|d,
 'fmadds': lambda d,n,m,a: 0x1F000000|m<<16|a<<10|n<<5|d,
}
TXT = {
 'smlal': 'smlal v{0}.8h, v{1}.8b, v{2}.8b', 'smlal2': 'smlal2 v{0}.8h, v{1}.16b, v{2}.16b',
 'sadalp': 'sadalp v{0}.4s, v{1}.8h', 'fcvtl': 'fcvtl v{0}.4s, v{1}.4h', 'fcvtl2': 'fcvtl2 v{0}.4s, v{1}.8h',
 'fmul': 'fmul v{0}.4s, v{1}.4s, v{2}.4s', 'fadd': 'fadd v{0}.4s, v{1}.4s, v{2}.4s',
 'faddp': 'faddp v{0}.4s, v{1}.4s, v{2}.4s', 'faddps': 'faddp s{0}, v{1}.2s', 'umaxv': 'umaxv s{0}, v{1}.4s',
 'frintn': 'frintn v{0}.4s, v{1}.4s', 'fmin': 'fmin v{0}.4s, v{1}.4s, v{2}.4s', 'fmax': 'fmax v{0}.4s, v{1}.4s, v{2}.4s',
 'fcvtzs': 'fcvtzs v{0}.4s, v{1}.4s', 'xtnh': 'xtn v{0}.4h, v{1}.4s', 'xtn2h': 'xtn2 v{0}.8h, v{1}.4s',
 'xtnb': 'xtn v{0}.8b, v{1}.8h', 'xtn2b': 'xtn2 v{0}.16b, v{1}.8h',
 'smull': 'smull v{0}.8h, v{1}.8b, v{2}.8b', 'smull2': 'smull2 v{0}.8h, v{1}.16b, v{2}.16b',
 'smlsl': 'smlsl v{0}.8h, v{1}.8b, v{2}.8b', 'smlsl2': 'smlsl2 v{0}.8h, v{1}.16b, v{2}.16b',
 'smlals': 'smlal v{0}.4s, v{1}.4h, v{2}.4h', 'smlal2s': 'smlal2 v{0}.4s, v{1}.8h, v{2}.8h',
 'cmhi': 'cmhi v{0}.16b, v{1}.16b, v{2}.16b', 'mulb': 'mul v{0}.16b, v{1}.16b, v{2}.16b',
 'sxtlh': 'sxtl v{0}.4s, v{1}.4h', 'sxtl2h': 'sxtl2 v{0}.4s, v{1}.8h', 'sxtlb': 'sxtl v{0}.8h, v{1}.8b',
 'saddlp': 'saddlp v{0}.4s, v{1}.8h', 'scvtf': 'scvtf v{0}.4s, v{1}.4s',
 'fmla': 'fmla v{0}.4s, v{1}.4s, v{2}.4s', 'fmlae': 'fmla v{0}.4s, v{1}.4s, v{2}.s[0]',
 'fmule': 'fmul v{0}.4s, v{1}.4s, v{2}.s[0]', 'tbl': 'tbl v{0}.16b, {{v{1}.16b}}, v{2}.16b',
 'fmadds': 'fmadd s{0}, s{1}, s{2}, s{3}',
}
src = open(sys.argv[1]).read()
asm_lines = []
def rep(m):
    op, args = m.group(2), [int(a) for a in m.group(3).split(',')]
    txt = TXT[op].format(*args)
    asm_lines.append((txt, ENC[op](*args)))
    return '%sWORD $0x%08x // %s' % (m.group(1), ENC[op](*args), txt)
out = re.sub(r'^(\s*)@(\w+)\(([\d, ]+)\)', rep, src, flags=re.M)
open(os.path.join(tmp,'chk.s'),'w').write('\n'.join(t for t,_ in asm_lines)+'\n')
subprocess.check_call(['aarch64-linux-gnu-as',os.path.join(tmp,'chk.s'),'-o',os.path.join(tmp,'chk.o')])
dis = subprocess.check_output(['aarch64-linux-gnu-objdump','-d',os.path.join(tmp,'chk.o')]).decode()
words = [int(l.split()[1],16) for l in dis.splitlines() if re.match(r'^\s+[0-9a-f]+:\s+[0-9a-f]{8}\s', l)]
assert words == [w for _,w in asm_lines], 'encoding mismatch'
open(sys.argv[2],'w').write(out)
print('ok', len(words), 'words checked against GNU as')
