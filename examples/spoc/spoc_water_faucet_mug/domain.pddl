(define (domain basic-domain)
  (:requirements :strips :typing :negative-preconditions :conditional-effects)
  (:types item appliance receptacle)
  (:constants faucet - appliance mug - item sink_basin - receptacle)
  (:predicates
    (holding ?i - item)
    (hands_free)
    (on ?i - item ?r - receptacle)
    (faucet_on ?a - appliance)
    (filled_with_water ?i - item)
  )
  (:action pick_up
    :parameters (?i - item ?r - receptacle)
    :precondition (and (on ?i ?r) (hands_free))
    :effect (and (holding ?i) (not (on ?i ?r)) (not (hands_free))))
  (:action put_on
    :parameters (?i - item ?r - receptacle)
    :precondition (holding ?i)
    :effect (and (on ?i ?r) (hands_free) (not (holding ?i))))
  (:action turn_on
    :parameters (?a - appliance)
    :precondition (and (not (faucet_on ?a)) (on mug sink_basin) (not (filled_with_water mug)))
    :effect (and (faucet_on ?a) (filled_with_water mug)))
  (:action turn_off
    :parameters (?a - appliance)
    :precondition (faucet_on ?a)
    :effect (not (faucet_on ?a)))
)
