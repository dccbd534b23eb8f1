(define (domain basic-domain)
  (:requirements :strips :typing :negative-preconditions :conditional-effects)
  (:types item appliance receptacle)
  (:constants coffee_machine - appliance mug - item)
  (:predicates
    (holding ?i - item)
    (hands_free)
    (in ?i - item ?a - appliance)
    (on ?i - item ?r - receptacle)
    (coffee_machine_on ?a - appliance)
    (has_coffee ?i - item)
  )
  (:action pick_up
    :parameters (?i - item ?r - receptacle)
    :precondition (and (on ?i ?r) (hands_free))
    :effect (and (holding ?i) (not (on ?i ?r)) (not (hands_free))))
  (:action put_on
    :parameters (?i - item ?r - receptacle)
    :precondition (holding ?i)
    :effect (and (on ?i ?r) (hands_free) (not (holding ?i))))
  (:action put_in
    :parameters (?i - item ?a - appliance)
    :precondition (and (holding ?i) (not (coffee_machine_on ?a)))
    :effect (and (in ?i ?a) (hands_free) (not (holding ?i))))
  (:action take_out
    :parameters (?i - item ?a - appliance)
    :precondition (and (in ?i ?a) (hands_free) (not (coffee_machine_on ?a)))
    :effect (and (holding ?i) (not (in ?i ?a)) (not (hands_free))))
  (:action turn_on
    :parameters (?a - appliance)
    :precondition (and (not (coffee_machine_on ?a)) (in mug ?a) (not (has_coffee mug)))
    :effect (and (coffee_machine_on ?a) (has_coffee mug)))
  (:action turn_off
    :parameters (?a - appliance)
    :precondition (coffee_machine_on ?a)
    :effect (not (coffee_machine_on ?a)))
)
