#!/usr/bin/env node
import "../dist/install-cni/main.mjs"
